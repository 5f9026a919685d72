/*
 * frames.ts: the binary frames of a terminal stream (docs/host.md, "The
 * stream's frames"): one frame per WebSocket message, a type byte, fixed
 * big-endian fields, then the bytes.  Offsets are below 2^53, so a Number
 * holds them exactly; the stream ID is 64 random bits, a BigInt.  A host's
 * frame of an unknown type or of the wrong length is a FrameError.
 */

export const FRAME_MAX = 16384;
const BEGIN = 0x62, OUTPUT = 0x6f, RESUME = 0x72, INPUT = 0x69, RESIZE = 0x77;

export class FrameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FrameError";
  }
}

export type HostFrame =
  | { type: "begin"; stream: bigint; offset: number; skipped: number }
  | { type: "output"; offset: number; bytes: Uint8Array };

function getOffset(v: DataView, at: number): number {
  const n = v.getUint32(at) * 4294967296 + v.getUint32(at + 4);
  if (n > Number.MAX_SAFE_INTEGER) throw new FrameError("an offset of 2^53 or more");
  return n;
}

function setOffset(v: DataView, at: number, n: number): void {
  v.setUint32(at, Math.floor(n / 4294967296));
  v.setUint32(at + 4, n % 4294967296);
}

export function decodeHostFrame(buf: ArrayBuffer): HostFrame {
  const v = new DataView(buf);
  const n = v.byteLength;
  if (n === 0) throw new FrameError("an empty frame");
  const type = v.getUint8(0);
  if (type === BEGIN) {
    if (n !== 25) throw new FrameError(`a begin frame of ${n} bytes (25 expected)`);
    return { type: "begin", stream: v.getBigUint64(1), offset: getOffset(v, 9), skipped: getOffset(v, 17) };
  }
  if (type === OUTPUT) {
    if (n < 10 || n > FRAME_MAX) throw new FrameError(`an output frame of ${n} bytes (10 to ${FRAME_MAX} expected)`);
    return { type: "output", offset: getOffset(v, 1), bytes: new Uint8Array(buf, 9) };
  }
  throw new FrameError(`an unknown frame type 0x${type.toString(16)}`);
}

export function encodeResume(stream: bigint, offset: number): ArrayBuffer {
  const v = new DataView(new ArrayBuffer(17));
  v.setUint8(0, RESUME);
  v.setBigUint64(1, stream);
  setOffset(v, 9, offset);
  return v.buffer;
}

/** Input frames for the bytes, each at most FRAME_MAX long. */
export function encodeInput(bytes: Uint8Array): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (let i = 0; i < bytes.length; i += FRAME_MAX - 1) {
    const part = bytes.subarray(i, i + FRAME_MAX - 1);
    const f = new Uint8Array(part.length + 1);
    f[0] = INPUT;
    f.set(part, 1);
    out.push(f.buffer);
  }
  return out;
}

export function encodeResize(rows: number, cols: number): ArrayBuffer {
  for (const x of [rows, cols])
    if (!(Number.isInteger(x) && x >= 1 && x <= 4096)) throw new RangeError("rows and cols are integers from 1 to 4096");
  const v = new DataView(new ArrayBuffer(5));
  v.setUint8(0, RESIZE);
  v.setUint16(1, rows);
  v.setUint16(3, cols);
  return v.buffer;
}
