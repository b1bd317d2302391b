// partwise report in headless Chromium: what a person would see. Run by
// tests/browser/run, which sets PARTWISE_BIN, PARTWISE_ROOT and PARTWISE_CHROMIUM.
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { chromium } = require('playwright-core');

const root = process.env.PARTWISE_ROOT;
const bin = process.env.PARTWISE_BIN;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'partwise-browser-'));
const VIEWPORT = { width: 1280, height: 900 };
let browser;

/** Runs `partwise report ARGS -o OUT`; the exit code must be `code`. */
function report(args, out, code) {
  // From the repository's root, so relative paths read as the README's do.
  const r = spawnSync(bin, ['report', ...args, '-o', out], { encoding: 'utf8', cwd: root });
  assert.equal(r.status, code, `partwise report ${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
  return out;
}

/** 1,000 partitions in two co-partitioned topics read by 1,000 members with
 * round-robin: a third topic of 7 partitions between them in the order
 * shifts every index of the second topic by 7 members, so all 1,000 split;
 * one key with 300 records (--counts) makes a hot partition. */
function bigCase() {
  const toml = path.join(tmp, 'big.toml');
  const topic = (name, n, producer) =>
    `[[topic]]\nname = "${name}"\npartitions = ${n}\n[[topic.producer]]\nname = "${producer}"\npartitioner = "java"\nkey_format = "string"\n\n`;
  fs.writeFileSync(
    toml,
    topic('a-orders', 1000, 'orders-svc') +
      topic('b-audit', 7, 'audit-svc') +
      topic('c-payments', 1000, 'payments-svc') +
      '[[copartition]]\nname = "orders"\ntopics = ["a-orders", "c-payments"]\n\n' +
      '[[consumer_group]]\nname = "joiner"\nassignor = "java:roundrobin"\nmembers = 1000\n' +
      'subscriptions = ["a-orders", "b-audit", "c-payments"]\n'
  );
  const counts = [];
  for (let i = 0; i < 5000; i++) counts.push(`user-${i},1`);
  counts.push('hot-user,300');
  const countsFile = path.join(tmp, 'big-counts.csv');
  fs.writeFileSync(countsFile, counts.join('\n') + '\n');
  return report([toml, '--counts', countsFile], path.join(tmp, 'big.html'), 1);
}

/** A page that may load only `file`: every other request is aborted and counted. */
async function open(file) {
  const context = await browser.newContext({ viewport: VIEWPORT });
  const page = await context.newPage();
  const url = pathToFileURL(file).href;
  const others = [];
  page.on('request', (r) => {
    if (r.url() !== url) others.push(r.url());
  });
  await context.route('**/*', (route) =>
    route.request().url() === url ? route.continue() : route.abort()
  );
  const started = Date.now();
  await page.goto(url, { waitUntil: 'load' });
  const wall = Date.now() - started;
  const timing = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const paint = performance.getEntriesByType('paint').map((p) => [p.name, p.startTime]);
    return { load: nav.loadEventEnd, paint: Object.fromEntries(paint) };
  });
  return { context, page, others, timing, wall };
}

/** Distinct colours of a PNG, decoded by the browser on a blank page of its own. */
async function colours(png) {
  const page = await browser.newPage();
  try {
    return await page.evaluate(async (b64) => {
      const img = new Image();
      img.src = 'data:image/png;base64,' + b64;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const g = c.getContext('2d');
      g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data;
      const seen = new Set();
      for (let i = 0; i < d.length; i += 4) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      return seen.size;
    }, png.toString('base64'));
  } finally {
    await page.close();
  }
}

/** The element is visible, its box is inside the page and, scrolled to, inside
 * the viewport; its screenshot is a non-empty PNG with more than one colour. */
async function seen(page, locator, what) {
  assert.ok(await locator.isVisible(), `${what}: not visible`);
  await locator.scrollIntoViewIfNeeded();
  const box = await locator.boundingBox();
  assert.ok(box && box.width > 0 && box.height > 0, `${what}: no box`);
  const vp = page.viewportSize();
  assert.ok(
    box.x >= -0.5 && box.y >= -0.5 && box.x + box.width <= vp.width + 0.5 && box.y + box.height <= vp.height + 0.5,
    `${what}: box ${JSON.stringify(box)} outside the viewport ${JSON.stringify(vp)}`
  );
  const size = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]);
  const pageBox = await locator.evaluate((e) => {
    const r = e.getBoundingClientRect();
    return { x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height };
  });
  assert.ok(pageBox.x + pageBox.w <= size[0] + 0.5 && pageBox.y + pageBox.h <= size[1] + 0.5, `${what}: outside the page`);
  const png = await locator.screenshot();
  assert.ok(png.length > 100 && png.subarray(1, 4).toString() === 'PNG', `${what}: empty screenshot`);
  assert.ok((await colours(png)) > 1, `${what}: screenshot of one colour`);
}

/** axe-core's serious and critical violations of the page. */
async function axe(page) {
  // Injected as inline text (addScriptTag with content), so it is no request.
  const source = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.addScriptTag({ content: source });
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return {
    all: result.violations,
    bad: result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'),
  };
}

const describe = (vs) => vs.map((v) => `${v.id} (${v.impact}): ${v.help} x${v.nodes.length} e.g. ${v.nodes[0]?.html}`).join('\n');

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.PARTWISE_CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu'],
  });
});

after(async () => {
  await browser?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('the example report: verdict, split cells and hot partition seen; no request; axe clean', async () => {
  const file = report(
    ['examples/ticker.toml', '--counts', 'examples/ticks.csv'],
    path.join(tmp, 'ticker.html'),
    1
  );
  const { context, page, others } = await open(file);
  try {
    if (process.env.PARTWISE_UPDATE_DOCS) {
      // The README's picture: the page as it opens, down to the split sweep.
      const clip = { x: 0, y: 0, width: VIEWPORT.width, height: 2100 };
      fs.writeFileSync(path.join(root, 'docs/ticker-report.png'), await page.screenshot({ fullPage: true, clip }));
    }
    // What the README links is what was tested.
    assert.equal(fs.readFileSync(file, 'utf8'), fs.readFileSync(path.join(root, 'examples/ticker-report.html'), 'utf8'));
    const verdict = page.locator('#verdict');
    await seen(page, verdict.locator('h2'), 'verdict heading');
    assert.match(await verdict.locator('h2').innerText(), /Verdict: \d+ findings?/);
    const items = await verdict.locator('.verdict > li').allInnerTexts();
    assert.ok(items.some((t) => /OK: co-partition group ticker .* is co-partitioned/.test(t)), items.join('\n'));
    assert.ok(items.some((t) => /OK: consumer group ticker-joiner .* keeps the units of ticker whole/.test(t)), items.join('\n'));
    assert.ok(items.some((t) => /FINDING: topic market-updates: HOT partition/.test(t) && /Fix:/.test(t)), items.join('\n'));
    // The verdict comes before every other section.
    const first = await page.evaluate(() => document.querySelector('main > section').id);
    assert.equal(first, 'verdict');

    // The matrix at 4 members (where kafkajs:roundrobin splits), cells marked
    // by text and by a pattern as well as by colour.
    const split = page.locator('#placement-0 table td.split');
    assert.ok((await split.count()) >= 6, 'split cells');
    await seen(page, split.first(), 'a split cell');
    assert.ok(
      (await page.locator('#placement-0 table td.split', { hasText: 'SPLIT' }).count()) >= 6,
      'split marked in words'
    );
    const bg = await split.first().evaluate((e) => getComputedStyle(e).backgroundImage);
    assert.match(bg, /repeating-linear-gradient/, 'split cells carry a pattern');

    const hot = page.locator('#skew-0 td.hot').first();
    await seen(page, hot, 'the hot partition row');
    assert.match(await hot.innerText(), /HOT/);
    await seen(page, page.locator('#skew-0 svg.chart'), 'the skew chart');

    // Keyboard: Tab reaches the skip link first, and it moves focus to the verdict.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.className), 'skip');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'verdict');

    const shot = await page.screenshot({ fullPage: true });
    assert.ok(shot.length > 10000 && (await colours(shot)) > 10, 'full-page screenshot');
    fs.writeFileSync(path.join(tmp, 'ticker-report.png'), shot);

    // Print: navigation hidden, and the page prints (Chromium's own PDF).
    await page.emulateMedia({ media: 'print' });
    assert.equal(await page.locator('nav').isVisible(), false, 'nav hidden in print');
    const pdf = await page.pdf({ format: 'A4' });
    assert.ok(pdf.subarray(0, 5).toString() === '%PDF-' && pdf.length > 10000, 'printed');
    await page.emulateMedia({ media: 'screen' });

    const { all, bad } = await axe(page);
    console.log(`axe (example): ${all.length} violations, ${bad.length} serious or critical${all.length ? '\n' + describe(all) : ''}`);
    assert.equal(bad.length, 0, describe(bad));
    assert.deepEqual(others, [], 'requests other than the file');
  } finally {
    await context.close();
  }
});

test('1,000 partitions x 1,000 members: renders under a second, splits and hot partition seen, axe clean', async () => {
  const file = bigCase();
  const { context, page, others, timing, wall } = await open(file);
  try {
    const painted = Math.max(timing.load, timing.paint['first-contentful-paint'] ?? 0);
    console.log(`render (1,000 x 1,000, ${fs.statSync(file).size} bytes): load event ${timing.load.toFixed(0)} ms, first contentful paint ${(timing.paint['first-contentful-paint'] ?? NaN).toFixed(0)} ms, goto ${wall} ms`);
    assert.ok(timing.load > 0 && painted < 1000, `render took ${painted} ms`);

    const items = await page.locator('#verdict .verdict > li').allInnerTexts();
    assert.ok(items.some((t) => /FINDING: consumer group joiner \(java:roundrobin\) SPLITS the units of orders at 1000 members/.test(t)), items.join('\n'));
    assert.ok(items.some((t) => /FINDING: topic a-orders: HOT partition/.test(t)), items.join('\n'));

    // The big matrix is folded; opened by keyboard, its split cells show.
    const details = page.locator('#placement-0 details').first();
    const summary = details.locator('summary');
    await summary.focus();
    await page.keyboard.press('Enter');
    assert.equal(await details.evaluate((d) => d.open), true, 'details opened by Enter');
    const split = details.locator('td.split');
    assert.equal(await split.count(), 3000, '1,000 split indices, two owner cells and a marker each');
    await seen(page, split.nth(1500), 'a split cell of the big matrix');

    const hotList = page.locator('#skew-0 .hot-list');
    await seen(page, hotList, 'the hot partition list');
    assert.match(await hotList.innerText(), /HOT \d+/);
    await seen(page, page.locator('#skew-0 svg.chart'), 'the big skew chart');

    // Printing opens every folded table.
    assert.ok((await page.locator('details:not([open])').count()) > 0, 'some tables start folded');
    await page.evaluate(() => window.dispatchEvent(new Event('beforeprint')));
    assert.equal(await page.locator('details:not([open])').count(), 0, 'every table open to print');

    const { all, bad } = await axe(page);
    console.log(`axe (1,000 x 1,000): ${all.length} violations, ${bad.length} serious or critical`);
    assert.equal(bad.length, 0, describe(bad));
    assert.deepEqual(others, [], 'requests other than the file');
  } finally {
    await context.close();
  }
});

const live = process.env.PARTWISE_KAFKA_BOOTSTRAP && process.env.PARTWISE_REDIS;
test(
  'the live sections (-b, -c against scripts/services): differences seen, no request, axe clean',
  { skip: live ? false : 'PARTWISE_KAFKA_BOOTSTRAP and PARTWISE_REDIS unset (scripts/test sets them)' },
  async () => {
    // The ticker's topics need not exist on the test broker: then the live
    // section says so, which is a difference to see.
    const file = report(
      ['examples/ticker.toml', '--counts', 'examples/ticks.csv', '-b', process.env.PARTWISE_KAFKA_BOOTSTRAP, '-c', process.env.PARTWISE_REDIS],
      path.join(tmp, 'live.html'),
      1
    );
    const { context, page, others } = await open(file);
    try {
      const items = await page.locator('#verdict .verdict > li[data-area="live"]').allInnerTexts();
      assert.ok(items.some((t) => /live redis family ticker .* 10 of 10 sample keys in one slot/.test(t)), items.join('\n'));
      assert.ok(items.some((t) => /live consumer group ticker-joiner/.test(t)), items.join('\n'));
      await seen(page, page.locator('#live-redis-0 table'), 'the live Redis table');
      await seen(page, page.locator('#live-kafka-0 h3'), 'the live Kafka section');
      const { all, bad } = await axe(page);
      console.log(`axe (live): ${all.length} violations, ${bad.length} serious or critical`);
      assert.equal(bad.length, 0, describe(bad));
      assert.deepEqual(others, [], 'requests other than the file');
    } finally {
      await context.close();
    }
  }
);

test('a page that asks for something remote is caught: the request is blocked and counted', async () => {
  // The counting above must be able to fail: a page with one image from
  // elsewhere shows one request.
  const file = path.join(tmp, 'remote.html');
  fs.writeFileSync(file, '<!DOCTYPE html><html lang="en"><title>t</title><img alt="x" src="https://example.invalid/x.png"></html>');
  const { context, others } = await open(file);
  try {
    assert.deepEqual(others, ['https://example.invalid/x.png']);
  } finally {
    await context.close();
  }
});
