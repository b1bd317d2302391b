'use strict'
/**
 * The Rust core as the KafkaJS binding calls it: partwise.wasm (built from
 * bindings/kafkajs/wasm by `bash build`, shipped in the package), loaded
 * synchronously, so `require` works on any OS and CPU Node 18+ runs on,
 * with no native module and no build on the user's machine.
 *
 * The module's ABI (bindings/kafkajs/wasm/src/lib.rs): a request is written
 * into the buffer pw_input(len) returns, pw_<call>(len) answers 0 with the
 * answer at pw_output_ptr()/pw_output_len(), or 1 with an error message
 * there. Requests and answers are little-endian: u32 counts and lengths, a
 * string as its u32 byte length and UTF-8 bytes.
 */

const fs = require('fs')
const path = require('path')

const file = path.join(__dirname, 'partwise.wasm')
let wasm
try {
  wasm = new WebAssembly.Instance(new WebAssembly.Module(fs.readFileSync(file)), {}).exports
} catch (e) {
  throw new Error(`partwise-kafkajs: ${file} is missing or does not load (${e.message}); in a clone, build it with: bash ${path.join(__dirname, 'build')}`)
}

// A request is built in a reused JS buffer, then copied into the module's
// memory in one go.
let scratch = Buffer.allocUnsafe(1 << 16)
let at = 0
function room(n) {
  if (at + n <= scratch.length) return
  const bigger = Buffer.allocUnsafe(Math.max(scratch.length * 2, at + n))
  scratch.copy(bigger, 0, 0, at)
  scratch = bigger
}
function putU8(n) {
  room(1)
  scratch[at++] = n
}
function putU32(n) {
  room(4)
  scratch.writeUInt32LE(n >>> 0, at)
  at += 4
}
function putI32(n) {
  room(4)
  scratch.writeInt32LE(n | 0, at)
  at += 4
}
function putStr(s) {
  const max = s.length * 3
  room(4 + max)
  const n = scratch.write(s, at + 4, 'utf8')
  scratch.writeUInt32LE(n, at)
  at += 4 + n
}
function putBytes(b) {
  room(4 + b.length)
  scratch.writeUInt32LE(b.length, at)
  b.copy ? b.copy(scratch, at + 4) : scratch.set(b, at + 4)
  at += 4 + b.length
}
function putStrs(list) {
  putU32(list.length)
  for (const s of list) putStr(String(s))
}
function putPartitions(list) {
  putU32(list.length)
  for (const [t, p] of list) {
    putStr(String(t))
    putI32(p)
  }
}

function begin() {
  at = 0
}

// Copies the request into the module and runs `call`; returns the answer
// as a Buffer of its own (the module's memory may grow, and is reused, on
// the next call), or throws the module's error message.
function send(call) {
  const ptr = wasm.pw_input(at)
  new Uint8Array(wasm.memory.buffer, ptr, at).set(scratch.subarray(0, at))
  const status = wasm[call](at)
  const answer = Buffer.from(new Uint8Array(wasm.memory.buffer, wasm.pw_output_ptr(), wasm.pw_output_len()))
  if (status !== 0) {
    const e = new Error(answer.toString('utf8'))
    e.code = 'InvalidArg'
    throw e
  }
  return answer
}

function sendBytes(call, bytes) {
  begin()
  room(bytes.length)
  scratch.set(bytes, 0)
  at = bytes.length
  return send(call)
}

/** Reads an answer. */
class Reader {
  constructor(buf) {
    this.buf = buf
    this.at = 0
  }
  u8() {
    return this.buf[this.at++]
  }
  u32() {
    const n = this.buf.readUInt32LE(this.at)
    this.at += 4
    return n
  }
  i32() {
    const n = this.buf.readInt32LE(this.at)
    this.at += 4
    return n
  }
  str() {
    const n = this.u32()
    const s = this.buf.toString('utf8', this.at, this.at + n)
    this.at += n
    return s
  }
  bytes() {
    const n = this.u32()
    const b = this.buf.subarray(this.at, this.at + n)
    this.at += n
    return b
  }
  strs() {
    const n = this.u32()
    const out = new Array(n)
    for (let i = 0; i < n; i++) out[i] = this.str()
    return out
  }
  partitions() {
    const n = this.u32()
    const out = new Array(n)
    for (let i = 0; i < n; i++) out[i] = [this.str(), this.i32()]
    return out
  }
}

function asBuffer(b, what) {
  if (Buffer.isBuffer(b)) return b
  if (b instanceof Uint8Array) return Buffer.from(b.buffer, b.byteOffset, b.byteLength)
  throw new TypeError(`${what}: expected a Buffer`)
}

/**
 * Reads the members of a JoinGroup response ([{ memberId, groupInstanceId,
 * memberMetadata }]) once: { handle, members: [{ topics } | { error }] } in
 * their order, `error` saying why a member's subscription does not decode.
 * The members stay in the module until assign(handle, ...) or
 * release(handle).
 */
function readMembers(members) {
  begin()
  putU32(members.length)
  for (const m of members) {
    putStr(String(m.memberId))
    if (typeof m.groupInstanceId === 'string') {
      putU8(1)
      putStr(m.groupInstanceId)
    } else putU8(0)
    putBytes(asBuffer(m.memberMetadata, `member '${m.memberId}': memberMetadata`))
  }
  const r = new Reader(send('pw_read_members'))
  const handle = r.u32()
  const out = new Array(members.length)
  for (let i = 0; i < members.length; i++) out[i] = r.u8() === 0 ? { topics: r.strs() } : { error: r.str() }
  return { handle, members: out }
}

/**
 * The leader's copartitioned assignment of the members read under `handle`
 * over `counts` ({ topic: partitions }): [{ memberId, memberAssignment }],
 * what the partwise runtime's leader sends (a member whose subscription
 * does not decode gets no partition, only the co-partition groups).
 */
function assign(handle, counts) {
  begin()
  putU32(handle)
  const topics = Object.keys(counts)
  putU32(topics.length)
  for (const t of topics) {
    putStr(t)
    putI32(counts[t])
  }
  const r = new Reader(send('pw_assign'))
  const n = r.u32()
  const out = new Array(n)
  for (let i = 0; i < n; i++) out[i] = { memberId: r.str(), memberAssignment: r.bytes() }
  return out
}

/** Forgets the members read under `handle` (a leader that will not assign them). */
function release(handle) {
  begin()
  putU32(handle)
  send('pw_release_members')
}

/** Subscription bytes (consumer protocol v3) of `topics`, `owned` [[topic, partition]] and `generation`. */
function encodeSubscription(topics, owned, generation) {
  begin()
  putStrs(topics)
  putPartitions(owned)
  putI32(generation)
  return send('pw_encode_subscription')
}

/** The topics of subscription bytes of any version; throws when they do not decode. */
function subscriptionTopics(metadata) {
  return new Reader(sendBytes('pw_subscription_topics', asBuffer(metadata, 'subscription'))).strs()
}

/** Subscription bytes of any version, decoded: { topics, owned, generation }. */
function decodeSubscription(metadata) {
  const r = new Reader(sendBytes('pw_decode_subscription', asBuffer(metadata, 'subscription')))
  return { topics: r.strs(), owned: r.partitions(), generation: r.i32() }
}

/** Assignment bytes of any version, decoded: { partitions, unitGroups? }. */
function decodeAssignment(assignment) {
  const r = new Reader(sendBytes('pw_decode_assignment', asBuffer(assignment, 'assignment')))
  const out = { partitions: r.partitions() }
  if (r.u8() === 1) {
    const n = r.u32()
    out.unitGroups = Array.from({ length: n }, () => r.strs())
  }
  return out
}

const KINDS = { '-2': 'sticky', '-3': 'random', '-4': 'roundrobin', '-5': 'rejected' }
const registry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(handle => {
      begin()
      putU32(handle)
      send('pw_partitioner_free')
    })
  : null

/** A partitioner parsed once from its spec; a bad spec throws, naming it. */
class Partitioner {
  constructor(spec) {
    begin()
    const s = Buffer.from(String(spec), 'utf8')
    room(s.length)
    scratch.set(s, 0)
    at = s.length
    this.handle = new Reader(send('pw_partitioner_new')).u32()
    if (registry) registry.register(this, this.handle)
  }

  /** The canonical spec. */
  get spec() {
    begin()
    putU32(this.handle)
    return send('pw_partitioner_spec').toString('utf8')
  }

  /**
   * Where a record with `key` (Buffer or string; null: no key) and
   * `headers` ([name, value] Buffer pairs) goes over `partitions`
   * partitions: { kind: 'partition', partition } or { kind } of a key-less
   * strategy ('sticky', 'random', 'roundrobin') or 'rejected'.
   */
  place(key, partitions, headers) {
    begin()
    if (key == null) putU8(0)
    else {
      putU8(1)
      if (typeof key === 'string') putStr(key)
      else putBytes(asBuffer(key, 'key'))
    }
    putU32(partitions)
    const hs = headers || []
    putU32(hs.length)
    for (const [name, value] of hs) {
      putBytes(asBuffer(name, 'header name'))
      putBytes(asBuffer(value, 'header value'))
    }
    const ptr = wasm.pw_input(at)
    new Uint8Array(wasm.memory.buffer, ptr, at).set(scratch.subarray(0, at))
    const code = Number(wasm.pw_place(this.handle, at))
    if (code >= 0) return { kind: 'partition', partition: code }
    if (code === -1) {
      const msg = Buffer.from(new Uint8Array(wasm.memory.buffer, wasm.pw_output_ptr(), wasm.pw_output_len())).toString('utf8')
      const e = new Error(msg)
      e.code = 'InvalidArg'
      throw e
    }
    return { kind: KINDS[code] }
  }
}

module.exports = { readMembers, assign, release, encodeSubscription, subscriptionTopics, decodeSubscription, decodeAssignment, Partitioner }
