/**
 * The global budget of upstream answer bytes held in memory (`limits.bufferedBytes`). Each
 * client request opens an account; its upstream calls charge the bytes they buffer to it as
 * they read them (an HTTP answer's declared Content-Length at once, else chunk by chunk; a ws
 * message when it arrives). A failed call gives its bytes back; an answered call keeps them
 * until the request ends (its body is held for the comparison and the reply), when the account
 * closes. A charge that would pass the budget is refused and the call fails ('budget').
 */
export class ByteBudget {
  used = 0;
  constructor(readonly limit: number) {
    if (!(limit > 0)) throw new TypeError('ByteBudget: the limit must be a positive number of bytes');
  }

  /** Nothing more can be charged. */
  get exhausted(): boolean {
    return this.used >= this.limit;
  }

  open(): BudgetAccount {
    return new BudgetAccount(this);
  }
}

export class BudgetAccount {
  /** Bytes this account holds. */
  held = 0;
  private closed = false;
  constructor(readonly budget: ByteBudget) {}

  get limit(): number {
    return this.budget.limit;
  }

  /** Charges `bytes`; false (and nothing charged) if the budget has no room for them. */
  take(bytes: number): boolean {
    if (this.closed || this.budget.used + bytes > this.budget.limit) return false;
    this.budget.used += bytes;
    this.held += bytes;
    return true;
  }

  /** Gives back bytes this account took (a failed call's). */
  give(bytes: number): void {
    const n = Math.min(bytes, this.held);
    this.held -= n;
    this.budget.used -= n;
  }

  /** The request ended: everything it held is given back; later charges are refused. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.budget.used -= this.held;
    this.held = 0;
  }
}
