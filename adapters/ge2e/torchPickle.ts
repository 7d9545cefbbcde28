// Reads the tensors of a PyTorch checkpoint saved in the legacy (non-zip) format: four pickles
// (magic number, protocol version, system info, the object) followed by the storages' raw
// bytes. Only what a state dict of float tensors needs: a small pickle machine (protocol 2)
// that rebuilds OrderedDicts and `_rebuild_tensor_v2` calls, no code is ever executed.

export interface Tensor {
  shape: number[]
  data: Float32Array
}

const MAGIC = 0x1950a86a20f9469cfc6cn

interface StorageRef {
  kind: 'storage'
  key: string
  dtype: string
  size: number
}
interface TensorRef {
  kind: 'tensor'
  storage: StorageRef
  offset: number
  shape: number[]
  stride: number[]
}
interface Global {
  kind: 'global'
  name: string
}

class Reader {
  pos = 0
  constructor(readonly buf: Buffer) {}
  byte() {
    return this.buf[this.pos++]!
  }
  take(n: number) {
    const b = this.buf.subarray(this.pos, this.pos + n)
    if (b.length < n) throw new Error('unexpected end of checkpoint')
    this.pos += n
    return b
  }
  line() {
    const end = this.buf.indexOf(0x0a, this.pos)
    const s = this.buf.toString('latin1', this.pos, end)
    this.pos = end + 1
    return s
  }
}

const MARK = Symbol('mark')

/** Runs one pickle from the reader's position; returns its value. */
function unpickle(r: Reader): unknown {
  const stack: unknown[] = []
  const memo = new Map<number, unknown>()
  const popMark = () => {
    const items: unknown[] = []
    for (;;) {
      const v = stack.pop()
      if (v === MARK) return items.reverse()
      if (stack.length === 0 && v === undefined) throw new Error('pickle: mark not found')
      items.push(v)
    }
  }
  const call = (fn: unknown, args: unknown[]): unknown => {
    const name = (fn as Global).name
    if (name === 'collections.OrderedDict') return new Map()
    if (name === 'torch._utils._rebuild_tensor_v2' || name === 'torch._utils._rebuild_tensor') {
      const [storage, offset, shape, stride] = args as [StorageRef, number, number[], number[]]
      return { kind: 'tensor', storage, offset, shape, stride } satisfies TensorRef
    }
    if (name === 'torch._utils._rebuild_parameter') return args[0]
    throw new Error(`pickle: will not call ${name}`)
  }
  for (;;) {
    const op = r.byte()
    switch (op) {
      case 0x80: // PROTO
        r.byte()
        break
      case 0x2e: // STOP
        return stack.pop()
      case 0x8a: { // LONG1
        const n = r.byte()
        const b = r.take(n)
        let v = 0n
        for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]!)
        if (n > 0 && b[n - 1]! & 0x80) v -= 1n << BigInt(8 * n)
        stack.push(v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v)
        break
      }
      case 0x4b: // BININT1
        stack.push(r.byte())
        break
      case 0x4d: // BININT2
        stack.push(r.take(2).readUInt16LE(0))
        break
      case 0x4a: // BININT
        stack.push(r.take(4).readInt32LE(0))
        break
      case 0x47: // BINFLOAT
        stack.push(r.take(8).readDoubleBE(0))
        break
      case 0x58: { // BINUNICODE
        const n = r.take(4).readUInt32LE(0)
        stack.push(r.take(n).toString('utf8'))
        break
      }
      case 0x8c: { // SHORT_BINUNICODE
        const n = r.byte()
        stack.push(r.take(n).toString('utf8'))
        break
      }
      case 0x55: { // SHORT_BINSTRING
        const n = r.byte()
        stack.push(r.take(n).toString('latin1'))
        break
      }
      case 0x54: { // BINSTRING
        const n = r.take(4).readInt32LE(0)
        stack.push(r.take(n).toString('latin1'))
        break
      }
      case 0x4e: // NONE
        stack.push(null)
        break
      case 0x88:
        stack.push(true)
        break
      case 0x89:
        stack.push(false)
        break
      case 0x7d: // EMPTY_DICT
        stack.push(new Map())
        break
      case 0x5d: // EMPTY_LIST
        stack.push([])
        break
      case 0x29: // EMPTY_TUPLE
        stack.push([])
        break
      case 0x28: // MARK
        stack.push(MARK)
        break
      case 0x74: // TUPLE
        stack.push(popMark())
        break
      case 0x85:
        stack.push([stack.pop()])
        break
      case 0x86: {
        const b = stack.pop()
        stack.push([stack.pop(), b])
        break
      }
      case 0x87: {
        const c = stack.pop()
        const b = stack.pop()
        stack.push([stack.pop(), b, c])
        break
      }
      case 0x71: // BINPUT
        memo.set(r.byte(), stack[stack.length - 1])
        break
      case 0x72: // LONG_BINPUT
        memo.set(r.take(4).readUInt32LE(0), stack[stack.length - 1])
        break
      case 0x68: // BINGET
        stack.push(memo.get(r.byte()))
        break
      case 0x6a: // LONG_BINGET
        stack.push(memo.get(r.take(4).readUInt32LE(0)))
        break
      case 0x63: { // GLOBAL
        const module = r.line()
        const name = r.line()
        stack.push({ kind: 'global', name: `${module}.${name}` } satisfies Global)
        break
      }
      case 0x51: { // BINPERSID
        const pid = stack.pop() as unknown[]
        if (pid[0] !== 'storage') throw new Error('pickle: unknown persistent id')
        const type = (pid[1] as Global).name
        stack.push({ kind: 'storage', key: String(pid[2]), dtype: type.replace(/^torch\./, ''), size: Number(pid[4]) } satisfies StorageRef)
        break
      }
      case 0x52: { // REDUCE
        const args = stack.pop() as unknown[]
        const fn = stack.pop()
        stack.push(call(fn, args))
        break
      }
      case 0x81: { // NEWOBJ
        const args = stack.pop() as unknown[]
        const cls = stack.pop()
        stack.push(call(cls, args))
        break
      }
      case 0x62: // BUILD: state on an OrderedDict (its _metadata) is not needed
        stack.pop()
        break
      case 0x73: { // SETITEM
        const v = stack.pop()
        const k = stack.pop()
        ;(stack[stack.length - 1] as Map<unknown, unknown>).set(k, v)
        break
      }
      case 0x75: { // SETITEMS
        const items = popMark()
        const d = stack[stack.length - 1] as Map<unknown, unknown>
        for (let i = 0; i < items.length; i += 2) d.set(items[i], items[i + 1])
        break
      }
      case 0x61: { // APPEND
        const v = stack.pop()
        ;(stack[stack.length - 1] as unknown[]).push(v)
        break
      }
      case 0x65: { // APPENDS
        const items = popMark()
        ;(stack[stack.length - 1] as unknown[]).push(...items)
        break
      }
      default:
        throw new Error(`pickle: unsupported opcode 0x${op.toString(16)} at ${r.pos - 1}`)
    }
  }
}

function collectTensors(v: unknown, prefix: string, out: Map<string, TensorRef>) {
  if (v instanceof Map) for (const [k, x] of v) collectTensors(x, prefix ? `${prefix}.${String(k)}` : String(k), out)
  else if (v && typeof v === 'object' && (v as TensorRef).kind === 'tensor') out.set(prefix, v as TensorRef)
}

/** Every float tensor in the checkpoint, by dotted path (e.g. `model_state.lstm.weight_ih_l0`). */
export function readTorchCheckpoint(buf: Buffer): Map<string, Tensor> {
  const r = new Reader(buf)
  const magic = unpickle(r)
  if (typeof magic !== 'bigint' || magic !== MAGIC) throw new Error('not a PyTorch checkpoint in the legacy format')
  const protocol = unpickle(r)
  if (protocol !== 1001) throw new Error(`unsupported PyTorch checkpoint protocol ${String(protocol)}`)
  unpickle(r) // system info
  const root = unpickle(r)
  const keys = unpickle(r) as string[]
  const storages = new Map<string, Float32Array>()
  for (const key of keys) {
    const count = Number(r.take(8).readBigInt64LE(0))
    const bytes = r.take(count * 4)
    const copy = new Float32Array(count)
    for (let i = 0; i < count; i++) copy[i] = bytes.readFloatLE(i * 4)
    storages.set(key, copy)
  }
  const refs = new Map<string, TensorRef>()
  collectTensors(root, '', refs)
  const tensors = new Map<string, Tensor>()
  for (const [name, t] of refs) {
    if (t.storage.dtype !== 'FloatStorage') throw new Error(`tensor ${name} is ${t.storage.dtype}, not float32`)
    const storage = storages.get(t.storage.key)
    if (!storage) throw new Error(`tensor ${name} has no storage`)
    const n = t.shape.reduce((a, b) => a * b, 1)
    const data = new Float32Array(n)
    // Copy through the strides, so any layout comes out contiguous (row-major).
    const idx = new Array(t.shape.length).fill(0)
    for (let i = 0; i < n; i++) {
      let off = t.offset
      for (let d = 0; d < idx.length; d++) off += idx[d] * t.stride[d]!
      data[i] = storage[off]!
      for (let d = idx.length - 1; d >= 0; d--) {
        if (++idx[d] < t.shape[d]!) break
        idx[d] = 0
      }
    }
    tensors.set(name, { shape: t.shape, data })
  }
  return tensors
}
