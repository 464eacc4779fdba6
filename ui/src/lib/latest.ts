// Answers that can come back in another order than they were asked for: each ask is numbered,
// and an answer is taken only when no later ask's answer was taken before it. Opening run A,
// then B, then A again: the first answer for A, if it is the slower, must not replace the
// second (the first answer for B is the caller's to drop: it is not the run shown).

export class Latest {
  private asked = 0;
  private taken = 0;

  /** Numbers a new ask. */
  ask(): number {
    this.asked += 1;
    return this.asked;
  }

  /** Whether the answer to ask `n` may be shown (no later ask's answer was); if so, it is now
   *  the latest shown. An answer not taken is dropped, never shown later. */
  take(n: number): boolean {
    if (n < this.taken) return false;
    this.taken = n;
    return true;
  }
}
