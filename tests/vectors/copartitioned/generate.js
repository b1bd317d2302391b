#!/usr/bin/env node
'use strict'
// Consistency vectors for the `copartitioned` assignor: group shapes and
// churn sequences, each step's assignment computed by the Rust core
// (crates/partwise/examples/copartitioned_json.rs). They are not
// known-answer references: they pin the bindings in other runtimes to the
// Rust implementation. Usage:
//   node tests/vectors/copartitioned/generate.js          # rewrite cases.jsonl
//   node tests/vectors/copartitioned/generate.js --check  # recompute, diff, exit 1 on a difference
// Needs the example built: cargo build -p partwise --example copartitioned_json
//
// A case: {"name", "topics": {topic: count}, "steps": [{"members": [{"id",
// "instance_id", "topics", "owned"?}], "expected": {"assignment", "unit_groups"}}]}.
// Step 0's members carry explicit owned partitions (a previous generation
// nobody here computed, claims overlapping); each later step's owned
// partitions are the previous step's output for the members still there.

const fs = require('fs')
const path = require('path')
const { execFileSync } = require('child_process')

const root = path.resolve(__dirname, '..', '..', '..')
const out = path.join(__dirname, 'cases.jsonl')

function rustBinary() {
  const dir = process.env.CARGO_TARGET_DIR || path.join(root, 'target')
  const bin = path.join(dir, 'debug', 'examples', 'copartitioned_json')
  if (!fs.existsSync(bin)) {
    throw new Error(`${bin} is missing: cargo build -p partwise --example copartitioned_json`)
  }
  return bin
}

/** The Rust assignment of one group ({topics, members with owned}). */
function rustAssign(bin, group) {
  return JSON.parse(execFileSync(bin, { input: JSON.stringify(group) }).toString())
}

/** Owned partitions per member for step `k` of `c`, given the previous output. */
function ownedFor(step, k, prev) {
  return step.members.map(m => ({
    ...m,
    owned: k === 0 ? m.owned || [] : (prev && prev.assignment[m.id]) || [],
  }))
}

/** Runs a case's steps through `assignFn(group) -> {assignment, unit_groups}`. */
function runCase(c, assignFn) {
  const results = []
  let prev = null
  c.steps.forEach((step, k) => {
    prev = assignFn({ topics: c.topics, members: ownedFor(step, k, prev) })
    results.push(prev)
  })
  return results
}

// A small deterministic PRNG (mulberry32), so the cases are reproducible.
function rng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function shapes() {
  const r = rng(16)
  const pick = xs => xs[Math.floor(r() * xs.length)]
  const int = (lo, hi) => lo + Math.floor(r() * (hi - lo + 1))
  const cases = []
  const topicSet = () => {
    const n = int(1, 5)
    const topics = {}
    for (let i = 0; i < n; i++) topics[`t${i}`] = pick([1, 2, 3, 6, 6, 8, 12, 24])
    return topics
  }
  const subsetOf = names => {
    const s = names.filter(() => r() < 0.6)
    return s.length ? s : [pick(names)]
  }
  let nextId = 0
  const newMember = (names, equal) => {
    const id = `member-${String(nextId++).padStart(3, '0')}-${Math.floor(r() * 1e6).toString(36)}`
    return {
      id,
      instance_id: r() < 0.2 ? `pod-${Math.floor(r() * 1000)}` : null,
      topics: equal ? names.slice() : subsetOf(names),
    }
  }
  const randomOwned = (topics, members) => {
    for (const m of members) {
      m.owned = []
      for (const t of Object.keys(topics)) {
        for (let p = 0; p < topics[t] + 1; p++) {
          // p == count: a partition that no longer exists, which must be dropped.
          if (r() < 1 / Math.max(1, members.length)) m.owned.push([t, p])
        }
      }
    }
  }
  // The seed's shape and its member counts 1..6.
  for (let k = 1; k <= 6; k++) {
    const names = ['market-updates', 'notifications']
    cases.push({
      name: `seed-two-topics-6-members-${k}`,
      topics: { 'market-updates': 6, notifications: 6 },
      steps: [{ members: Array.from({ length: k }, () => newMember(names, true)) }],
    })
  }
  // Single generations: equal and unequal subscriptions, with and without owned.
  for (let i = 0; i < 120; i++) {
    const topics = topicSet()
    const names = Object.keys(topics)
    const equal = r() < 0.5
    const members = Array.from({ length: int(1, 14) }, () => newMember(names, equal))
    if (r() < 0.6) randomOwned(topics, members)
    cases.push({ name: `shape-${i}${equal ? '-equal' : '-unequal'}`, topics, steps: [{ members }] })
  }
  // Churn: each step a member joins, leaves (or is killed: the same to the
  // leader), or changes its subscription; owned partitions carried forward.
  for (let i = 0; i < 40; i++) {
    const topics = topicSet()
    const names = Object.keys(topics)
    const equal = r() < 0.5
    let members = Array.from({ length: int(1, 8) }, () => newMember(names, equal))
    const steps = [{ members: members.map(m => ({ ...m })) }]
    for (let s = 0; s < int(4, 10); s++) {
      const what = r()
      if (what < 0.4 || members.length === 1) members.push(newMember(names, equal))
      else if (what < 0.8) members.splice(int(0, members.length - 1), 1)
      else if (!equal) {
        const m = members[int(0, members.length - 1)]
        members = members.map(x => (x === m ? { ...x, topics: subsetOf(names) } : x))
      }
      steps.push({ members: members.map(m => ({ ...m })) })
    }
    cases.push({ name: `churn-${i}${equal ? '-equal' : '-unequal'}`, topics, steps })
  }
  return cases
}

function generate() {
  const bin = rustBinary()
  return shapes().map(c => {
    const expected = runCase(c, g => rustAssign(bin, g))
    return { ...c, steps: c.steps.map((s, k) => ({ ...s, expected: expected[k] })) }
  })
}

function load() {
  return fs
    .readFileSync(out, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map(l => JSON.parse(l))
}

module.exports = { generate, load, runCase, rustBinary, rustAssign }

if (require.main === module) {
  const cases = generate()
  const text = cases.map(c => JSON.stringify(c)).join('\n') + '\n'
  if (process.argv.includes('--check')) {
    if (fs.readFileSync(out, 'utf8') !== text) {
      console.error(`${out}: differs from what the Rust assignor computes now; rerun without --check`)
      process.exit(1)
    }
    console.log(`${cases.length} cases agree with the Rust assignor`)
  } else {
    fs.writeFileSync(out, text)
    const steps = cases.reduce((n, c) => n + c.steps.length, 0)
    console.log(`wrote ${cases.length} cases (${steps} generations) to ${out}`)
  }
}
