// A permit is a granted share of a scheduler's byte budget; releasing it returns the charge
// exactly once, however many times (and however) it is released.

import type { MediaDc, MediaDirection, MediaPriority } from "./kinds.js";

/**
 * A granted charge against the byte budget of one (data centre, direction). Release it when the
 * chunk's request is done — best with `using`/`await using`, so an exception cannot leak it.
 * Releasing twice is a no-op. A permit outlives a rebind or a close of its transfer: it stays
 * charged at the scheduler that granted it until released.
 *
 * @example
 * await using permit = await transfer.acquire(512 * 1024, { signal });
 * await downloadRange(offset, 512 * 1024, { signal });
 */
export class MediaPermit implements Disposable, AsyncDisposable {
  /** Sequence number within the registry (also in grant and release events). */
  readonly id: number;
  /** The transfer it was granted to. */
  readonly transferId: string;
  /** The data centre whose budget it charges (where it was granted). */
  readonly dc: MediaDc;
  readonly direction: MediaDirection;
  /** The priority it was granted at. */
  readonly priority: MediaPriority;
  /** Bytes asked for. */
  readonly bytes: number;
  /** Bytes charged: `bytes` rounded up to a multiple of 64 KiB. */
  readonly chargedBytes: number;
  #onRelease: ((permit: MediaPermit) => void) | undefined;

  /**
   * @internal Permits are made by schedulers only; `onRelease` runs once, at the first release.
   * Positional arguments: a permit is made per grant, on the hot path.
   */
  constructor(
    id: number,
    transferId: string,
    dc: MediaDc,
    direction: MediaDirection,
    priority: MediaPriority,
    bytes: number,
    chargedBytes: number,
    onRelease: (permit: MediaPermit) => void,
  ) {
    this.id = id;
    this.transferId = transferId;
    this.dc = dc;
    this.direction = direction;
    this.priority = priority;
    this.bytes = bytes;
    this.chargedBytes = chargedBytes;
    this.#onRelease = onRelease;
  }

  /** Whether the charge was returned. */
  get isReleased(): boolean {
    return this.#onRelease === undefined;
  }

  /** Returns the charge to the scheduler and lets the next waiter in (idempotent). */
  release(): void {
    const onRelease = this.#onRelease;
    if (onRelease === undefined) return;
    this.#onRelease = undefined;
    onRelease(this);
  }

  /** Same as {@link MediaPermit.release}, for `using`. */
  [Symbol.dispose](): void {
    this.release();
  }

  /** Same as {@link MediaPermit.release}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    this.release();
    return Promise.resolve();
  }
}
