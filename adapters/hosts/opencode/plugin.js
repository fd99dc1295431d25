// The workmem hooks for OpenCode (docs/hosts.md, "OpenCode"). Every hook forwards to one
// `workmem serve` child through ServeClient and never throws into OpenCode: when workmem is missing
// or its child died, the hooks do nothing (no memory, no crash) and the failure is logged once.
import { isAbsolute, resolve } from "node:path"

import { isHelperAgent, messageFields, notePart, replyText, summaryText, systemEntries, toolFields } from "./mapping.js"
import { ServeClient } from "./serve-client.js"

function logger(client) {
  return (message) => {
    try {
      const sent = client && client.app && client.app.log
        ? client.app.log({ body: { service: "workmem", level: "warn", message } })
        : null
      if (sent && typeof sent.catch === "function") sent.catch(() => console.error(`workmem: ${message}`))
      else if (!sent) console.error(`workmem: ${message}`)
    } catch {
      console.error(`workmem: ${message}`)
    }
  }
}

function unwrap(response) {
  return response && typeof response === "object" && "data" in response ? response.data : response
}

// The text part that adds a prompt's recalled memories to its message: synthetic (not typed by the
// user), in the message's session, with an id after the message's own text part.
export function recallPart(observed, output) {
  const text = observed && typeof observed.recalled === "string" ? observed.recalled : ""
  if (!text || !output || !Array.isArray(output.parts)) return null
  const first = output.parts.find((p) => p && p.type === "text") || {}
  const part = { type: "text", text, synthetic: true }
  if (typeof first.messageID === "string") part.messageID = first.messageID
  if (typeof first.sessionID === "string") part.sessionID = first.sessionID
  if (typeof first.id === "string") part.id = `${first.id}wr`
  return part
}

// createHooks({client, directory, worktree}, {command, serve}) -> the hooks object OpenCode expects.
// `serve` (a ServeClient or anything with request/close) replaces the child, for tests.
export function createHooks(ctx = {}, options = {}) {
  const client = ctx.client
  const log = logger(client)
  const base = ctx.directory || ctx.worktree || process.cwd()
  const workspace = isAbsolute(base) ? base : resolve(base)
  const serve = options.serve || new ServeClient({ command: options.command || ["workmem"], log })
  const parents = new Map() // sessionID -> parentID or null

  async function parentOf(sessionID) {
    if (parents.has(sessionID)) return parents.get(sessionID)
    let parent = null
    try {
      const info = unwrap(await client.session.get({ path: { id: sessionID } }))
      parent = (info && typeof info.parentID === "string" && info.parentID) || null
    } catch {}
    parents.set(sessionID, parent)
    return parent
  }

  async function send(op, sessionID, fields) {
    const parent = await parentOf(sessionID)
    return serve.request(op, { workspace, ...fields, ...(parent ? { parent } : {}) })
  }

  const guard = (name, fn) => async (...args) => {
    try {
      await fn(...args)
    } catch (error) {
      log(`${name} failed: ${error && error.message ? error.message : error}`)
    }
  }

  return {
    "chat.message": guard("chat.message", async (input, output) => {
      const fields = messageFields(input, output)
      if (!fields) return
      const observed = await send("message", fields.session, fields)
      // what "forget that …" / "use X instead of Y" did (docs/decisions.md#d19), then just-in-time
      // recall (docs/decisions.md#d16): memories matching the prompt, for this turn only
      for (const part of [notePart(observed, output), recallPart(observed, output)]) {
        if (part) output.parts.push(part)
      }
    }),

    "experimental.chat.system.transform": guard("system.transform", async (input, output) => {
      const sessionID = input && input.sessionID
      if (typeof sessionID !== "string" || !sessionID || !output || !Array.isArray(output.system)) return
      if (isHelperAgent(output.system)) return
      const injection = await send("open-session", sessionID, { session: sessionID, host: "opencode" })
      output.system.push(...systemEntries(injection))
    }),

    "tool.execute.after": guard("tool.execute.after", async (input, output) => {
      const fields = toolFields(input, output)
      if (fields) await send("tool", fields.session, fields)
    }),

    "experimental.session.compacting": guard("session.compacting", async (input, output) => {
      const sessionID = input && input.sessionID
      if (typeof sessionID !== "string" || !sessionID || !output) return
      if (await parentOf(sessionID)) return
      const prompt = await serve.request("compaction-prompt", { workspace, session: sessionID })
      if (prompt && typeof prompt.text === "string" && prompt.text) output.prompt = prompt.text
    }),

    event: guard("event", async ({ event } = {}) => {
      const type = event && event.type
      const props = (event && event.properties) || {}
      if (type === "session.created" || type === "session.updated") {
        const info = props.info
        if (info && typeof info.id === "string") parents.set(info.id, info.parentID || null)
      } else if (type === "session.compacted") {
        const sessionID = props.sessionID
        if (typeof sessionID !== "string" || !sessionID) return
        const messages = unwrap(await client.session.messages({ path: { id: sessionID } }))
        await send("compacted", sessionID, { session: sessionID, summary: summaryText(messages) || "", host: "opencode" })
      } else if (type === "session.deleted") {
        const info = props.info || {}
        const sessionID = info.id || props.sessionID
        if (typeof sessionID !== "string" || !sessionID) return
        if (!parents.has(sessionID)) parents.set(sessionID, info.parentID || null)
        await send("end-session", sessionID, { session: sessionID })
        parents.delete(sessionID)
      } else if (type === "session.idle") {
        // after every turn (not the end of a session): the agent's reply, for the memories it cites
        const sessionID = props.sessionID
        if (typeof sessionID !== "string" || !sessionID || (await parentOf(sessionID))) return
        const messages = unwrap(await client.session.messages({ path: { id: sessionID } }))
        const text = replyText(messages)
        if (text) await send("reply", sessionID, { session: sessionID, text })
      }
    }),

    dispose: async () => {
      serve.close()
    },
  }
}
