// One `workmem serve` child and the JSON-lines conversation with it (docs/protocol.md).
//
// request(op, fields) resolves with the response's `result`, or with `null` when workmem is not
// available (not installed, the child died, a timeout) or answered with an error. It never rejects.
// A child that could not be started or died is started again on a later call, at most once per
// `restartAfterMs` (a minute by default). Every failure is passed to `log` once per outage.
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"

export const RESTART_AFTER_MS = 60_000
export const REQUEST_TIMEOUT_MS = 15_000

export class ServeClient {
  constructor({ command = ["workmem"], env = process.env, log = () => {}, now = Date.now,
                restartAfterMs = RESTART_AFTER_MS, timeoutMs = REQUEST_TIMEOUT_MS } = {}) {
    this.command = Array.isArray(command) ? command : [command]
    this.env = env
    this.log = log
    this.now = now
    this.restartAfterMs = restartAfterMs
    this.timeoutMs = timeoutMs
    this.child = null
    this.startedAt = null
    this.nextId = 1
    this.pending = new Map()
    this.down = false // true from a failure until the next successful response
    this.lastError = null
    this.starts = 0
  }

  // The running child, a new one, or null (not allowed to restart yet / could not start).
  ensure() {
    if (this.child) return this.child
    if (this.startedAt !== null && this.now() - this.startedAt < this.restartAfterMs) return null
    this.startedAt = this.now()
    this.starts += 1
    let child
    try {
      child = spawn(this.command[0], [...this.command.slice(1), "serve"], {
        env: this.env,
        stdio: ["pipe", "pipe", "pipe"],
        windowsHide: true,
      })
    } catch (error) {
      this.fail(`cannot start ${this.command[0]}: ${error && error.message ? error.message : error}`)
      return null
    }
    this.child = child
    let stderrTail = ""
    child.stderr.on("data", (chunk) => {
      stderrTail = (stderrTail + chunk.toString("utf8")).slice(-400)
    })
    child.on("error", (error) => {
      const why = error && error.code === "ENOENT" ? `${this.command[0]} not found on PATH` : String(error && error.message)
      this.gone(child, why)
    })
    child.on("exit", (code, signal) => {
      const last = stderrTail.trim().split("\n").pop() || ""
      this.gone(child, `workmem serve exited (${signal || code})${last ? `: ${last}` : ""}`)
    })
    child.stdin.on("error", () => {}) // a broken pipe shows up as the exit above
    createInterface({ input: child.stdout }).on("line", (line) => this.receive(line))
    this.hold(child, false)
    return child
  }

  // An idle child must not keep the host process alive (a one-shot `opencode run` has to exit);
  // a child with requests in flight must, or their answers would be lost.
  hold(child, busy) {
    for (const handle of [child, child.stdout, child.stderr, child.stdin]) {
      const fn = handle && (busy ? handle.ref : handle.unref)
      if (typeof fn === "function") fn.call(handle)
    }
  }

  settled(id) {
    const waiter = this.pending.get(id)
    if (!waiter) return null
    this.pending.delete(id)
    clearTimeout(waiter.timer)
    if (this.pending.size === 0 && this.child) this.hold(this.child, false)
    return waiter
  }

  receive(line) {
    let message
    try {
      message = JSON.parse(line)
    } catch {
      return
    }
    const waiter = this.settled(message && message.id)
    if (!waiter) return
    if (message.error) {
      const text = `workmem ${waiter.op}: ${message.error.code}: ${message.error.message}`
      if (text !== this.lastError) this.log(text) // a lasting failure (a held lock) is logged once
      this.lastError = text
      waiter.resolve(null)
      return
    }
    this.down = false
    this.lastError = null
    waiter.resolve(message.result ?? null)
  }

  gone(child, why) {
    if (this.child !== child) return
    this.child = null
    this.fail(why)
    for (const [id, waiter] of this.pending) {
      clearTimeout(waiter.timer)
      waiter.resolve(null)
      this.pending.delete(id)
    }
  }

  fail(why) {
    if (!this.down) this.log(`workmem is unavailable, memory is off until it is back: ${why}`)
    this.down = true
  }

  request(op, fields = {}) {
    const child = this.ensure()
    if (!child) return Promise.resolve(null)
    const id = this.nextId++
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (this.settled(id)) {
          this.log(`workmem ${op}: no answer within ${this.timeoutMs} ms`)
          resolve(null)
        }
      }, this.timeoutMs)
      if (this.pending.size === 0) this.hold(child, true)
      this.pending.set(id, { op, resolve, timer })
      try {
        child.stdin.write(JSON.stringify({ id, op, ...fields }) + "\n")
      } catch (error) {
        this.gone(child, String(error && error.message))
      }
    })
  }

  close() {
    const child = this.child
    this.child = null
    for (const waiter of this.pending.values()) {
      clearTimeout(waiter.timer)
      waiter.resolve(null)
    }
    this.pending.clear()
    if (child) {
      try {
        child.stdin.end()
      } catch {}
    }
  }
}
