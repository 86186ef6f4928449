// Requests that wait while a write is under way. The worker holds Python's
// requests (▶, checks, the lab, the warm-up figure) while its copies are being
// written to the device (worker.js): a cell holds the worker's only thread,
// and ■ may then end the worker with the write still open (in WebKit, a
// database no later worker of the page could use again).

export class WriteGate {
  #writing = null;

  /** Holds the requests `after` wraps until `writing` settles; answers what `writing` answers. */
  async hold(writing) {
    this.#writing = writing;
    try {
      return await writing;
    } finally {
      if (this.#writing === writing) this.#writing = null;
    }
  }

  /** `answer`, called once no write is under way (one started meanwhile is waited for too). */
  after(answer) {
    return async (payload) => {
      while (this.#writing) await this.#writing.catch(() => {});
      return answer(payload);
    };
  }
}
