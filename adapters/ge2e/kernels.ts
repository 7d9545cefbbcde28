// The speaker encoder's arithmetic on the WebAssembly SIMD kernel (kernels.wat): weights live in
// the module's memory for the encoder's lifetime; each call lays its operands out in a scratch
// area after them. Plain JavaScript loops ran the LSTM at a tenth of this speed.
import { KERNELS_WASM_BASE64 } from './kernels.wasm.ts'

type Gemm = (W: number, G: number, K: number, X: number, R: number, base: number, bs: number, out: number) => void

/** A matrix kept in the kernel's memory: `rows` × `cols`, row-major. */
export interface Resident {
  ptr: number
  rows: number
  cols: number
}

const PAGE = 65536
const align = (n: number) => (n + 15) & ~15

export class Kernels {
  private readonly memory: WebAssembly.Memory
  private readonly gemmNt: Gemm
  /** End of the resident area; scratch starts here. */
  private top = 16
  private scratchTop = 0

  constructor() {
    const module = new WebAssembly.Module(Buffer.from(KERNELS_WASM_BASE64, 'base64'))
    const instance = new WebAssembly.Instance(module, {})
    this.memory = instance.exports.memory as WebAssembly.Memory
    this.gemmNt = instance.exports.gemm_nt as Gemm
  }

  private ensure(bytes: number): void {
    const have = this.memory.buffer.byteLength
    if (bytes > have) this.memory.grow(Math.ceil((bytes - have) / PAGE))
  }

  /** Copies `data` (rows × cols) into the resident area, for good. */
  keep(data: Float32Array, rows: number, cols: number): Resident {
    if (this.scratchTop > this.top) throw new Error('resident matrices are kept before any scratch is used')
    const ptr = this.top
    this.top = align(ptr + data.length * 4)
    this.ensure(this.top)
    new Float32Array(this.memory.buffer, ptr, data.length).set(data)
    return { ptr, rows, cols }
  }

  /** Starts a computation: forgets earlier scratch arrays, and reserves room for `floats` more. */
  begin(floats: number): void {
    this.scratchTop = this.top
    this.ensure(this.top + floats * 4 + 64 * 16)
  }

  /** A scratch array of `n` floats (zeroed), valid until the next `begin`. */
  alloc(n: number): number {
    const ptr = this.scratchTop
    this.scratchTop = align(ptr + n * 4)
    this.ensure(this.scratchTop)
    this.view(ptr, n).fill(0)
    return ptr
  }

  /** A view of `n` floats at `ptr`; take it again after any `alloc` (memory growth detaches it). */
  view(ptr: number, n: number): Float32Array {
    return new Float32Array(this.memory.buffer, ptr, n)
  }

  /**
   * out[r][g] = base[r·baseStride + g] + Σ_k W[g][k]·X[r][k], for r < rows: X is rows × W.cols at
   * `x`, out is rows × W.rows at `out`; baseStride 0 adds one row (a bias) to every output row.
   */
  gemm(w: Resident, x: number, rows: number, base: number, baseStride: number, out: number): void {
    if (w.cols % 4 !== 0) throw new Error('the kernel needs a multiple of 4 columns')
    if (rows > 0) this.gemmNt(w.ptr, w.rows, w.cols, x, rows, base, baseStride, out)
  }
}
