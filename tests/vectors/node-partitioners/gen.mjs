// Known answers of @platformatic/kafka's partitioners, from the installed
// package (the version is read from its package.json and written into the
// output). Keys: keys.jsonl (written here, deterministic); answers: one line
// per key with the partition for every count in COUNTS.
//
// The package's exported partitioner returns a partition number before the
// producer reduces it: Producer#send does `message.partition %=
// partitionsCount` (src/clients/producer/producer.ts), and
// compatibilityPartitioner is passed the same way through the `partitioner`
// option, so the answer is `partitioner(message, key) % n` for both.
import { writeFileSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import * as kafka from '@platformatic/kafka'

// The package exports no ./package.json: read it beside node_modules.
const pkg = fileURLToPath(new URL('./node_modules/@platformatic/kafka/package.json', import.meta.url))
const version = JSON.parse(readFileSync(pkg, 'utf8')).version
const out = process.argv[2]
const COUNTS = [1, 2, 3, 5, 6, 7, 8, 12, 16, 100, 1000, 4096, 9973, 10000]

// A small deterministic generator (xorshift32) for the binary keys.
let s = 0x2545f491
const next = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s }
const bytes = (n) => { const b = Buffer.alloc(n); for (let i = 0; i < n; i++) b[i] = next() & 0xff; return b }

const keys = [Buffer.alloc(0)]
for (const sym of ['BBCA', 'ICBP', 'UNVR', 'TLKM', 'ASII', 'BBRI', 'BMRI', 'GOTO', 'ANTM', 'MDKA']) keys.push(Buffer.from(sym))
for (const t of ['a', 'ab', 'abc', 'abcd', 'abcde', '100:48069', 'user-42', '日本', 'café', '😀', 'Ünïcödé', 'ß']) keys.push(Buffer.from(t))
for (let i = 0; keys.length < 1200; i++) keys.push(Buffer.from(`key-${i}`))
for (let len = 1; keys.length < 1900; len = (len % 64) + 1) keys.push(bytes(len))
for (let len = 65; keys.length < 1990; len += 37) keys.push(bytes(len))
for (const len of [1000, 4096, 20480, 20481, 20482, 20483]) keys.push(bytes(len))
for (const len of [20480, 20479, 20477, 20000]) keys.push(Buffer.from('k'.repeat(len)))

const rows = (name, fn) => keys.map((k, i) => JSON.stringify({ k: i, p: COUNTS.map(n => fn({}, k) % n) })).join('\n') + '\n'
const head = (what) => JSON.stringify({ client: '@platformatic/kafka', version, partitioner: what, counts: COUNTS, keys: keys.length }) + '\n'

writeFileSync(`${out}/keys.jsonl`, keys.map(k => JSON.stringify({ key_hex: k.toString('hex') })).join('\n') + '\n')
writeFileSync(`${out}/platformatic_default.jsonl`, head('defaultPartitioner') + rows('default', kafka.defaultPartitioner))
// A null key: the default partitioner is not called (Producer#send deals
// such records round-robin per topic), compatibilityPartitioner is.
const nullKey = JSON.stringify({ null_key: true, p: COUNTS.map(n => kafka.compatibilityPartitioner({}, undefined) % n) }) + '\n'
writeFileSync(`${out}/platformatic_compatibility.jsonl`, head('compatibilityPartitioner') + rows('compatibility', kafka.compatibilityPartitioner) + nullKey)
console.error(`@platformatic/kafka ${version}: ${keys.length} keys x ${COUNTS.length} counts`)
