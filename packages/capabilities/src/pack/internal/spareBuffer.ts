/**
 * One large buffer handed from one user to the next. A full-size screenshot allocates two buffers of
 * several megabytes (the GetImage reply, the PNG scanlines) and drops them a few milliseconds later;
 * memory outside V8's heap allocated that fast makes V8 start a full mark-compact every call or two,
 * which cost more than the capture. Reusing one buffer per role takes that away.
 *
 * `take` hands out the spare when it is large enough (else a new buffer); `give` returns one once
 * nothing reads it any more. A second user at the same time gets a new buffer, so users never share
 * one. The spare is dropped after `idleMs` without use, so an idle process holds nothing.
 */
export class SpareBuffer {
  #spare: Buffer | undefined = undefined;
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;
  readonly #idleMs: number;

  constructor(idleMs: number) {
    this.#idleMs = idleMs;
  }

  /** A buffer of at least `bytes`, the caller's alone until it {@link give}s it back. */
  take(bytes: number): Buffer {
    const spare = this.#spare;
    this.#spare = undefined;
    return spare !== undefined && spare.length >= bytes ? spare : Buffer.allocUnsafe(bytes);
  }

  /** Returns a buffer from {@link take}; the larger of it and the current spare is kept. */
  give(buffer: Buffer): void {
    if (this.#spare === undefined || this.#spare.length < buffer.length) this.#spare = buffer;
    if (this.#timer !== undefined) {
      this.#timer.refresh();
      return;
    }
    this.#timer = setTimeout(() => {
      this.#spare = undefined;
      this.#timer = undefined;
    }, this.#idleMs);
    this.#timer.unref();
  }

  /** Whether a spare is held (tests). */
  get holding(): boolean {
    return this.#spare !== undefined;
  }
}
