// Pure mapping from OpenCode hook payloads to `workmem serve` request fields (docs/hosts.md, "OpenCode").
// Nothing here does I/O; each function returns null when the payload gives workmem nothing to do.

// The text the user typed: text parts that OpenCode did not add itself (`synthetic`) or mark `ignored`.
export function userText(parts) {
  if (!Array.isArray(parts)) return ""
  return parts
    .filter((p) => p && p.type === "text" && typeof p.text === "string" && !p.synthetic && !p.ignored)
    .map((p) => p.text)
    .join("\n")
}

// chat.message(input: {sessionID, messageID?}, output: {message, parts}) -> "message" fields.
export function messageFields(input, output) {
  const session = input && input.sessionID
  const text = userText(output && output.parts)
  if (typeof session !== "string" || !session || !text.trim()) return null
  const id = (output && output.message && output.message.id) || (input && input.messageID)
  return typeof id === "string" && id ? { session, text, messageId: id } : { session, text }
}

// The note of a "message" answer (what the message's requests to forget or correct memories did) as
// a synthetic text part of the user's message, or null when there is none.
export function notePart(observed, output) {
  const note = observed && typeof observed.note === "string" ? observed.note : ""
  if (!note || !output || !Array.isArray(output.parts)) return null
  const message = output.message || {}
  const last = output.parts[output.parts.length - 1] || {}
  const part = { type: "text", text: note, synthetic: true }
  if (typeof last.id === "string") part.id = `${last.id}wm`
  if (typeof (last.messageID || message.id) === "string") part.messageID = last.messageID || message.id
  if (typeof (last.sessionID || message.sessionID) === "string") part.sessionID = last.sessionID || message.sessionID
  return part
}

const MAX_INPUT = 20000

// The text of the last assistant message of a turn (client.session.messages), or null: read for
// the memories it cites by id (docs/decisions.md#d19), never stored.
export function replyText(messages) {
  if (!Array.isArray(messages)) return null
  const last = messages.at(-1)
  if (!last || !last.info || last.info.role !== "assistant" || last.info.summary) return null
  const text = (last.parts || [])
    .filter((p) => p && p.type === "text" && typeof p.text === "string" && !p.synthetic)
    .map((p) => p.text)
    .join("\n")
  return text ? text.slice(0, MAX_INPUT) : null
}

const FILE_TOOLS = new Set(["read", "edit", "write"])

// tool.execute.after(input: {tool, sessionID, args}, output: {output, metadata}) -> "tool" fields.
// Files: the absolute `metadata.filepath` when present, else `args.filePath`. bash: the command, its
// output, and the exit code from `metadata.exit` (left out when OpenCode did not report one).
export function toolFields(input, output) {
  const session = input && input.sessionID
  const tool = input && input.tool
  if (typeof session !== "string" || !session || typeof tool !== "string") return null
  const args = (input && input.args) || {}
  const meta = (output && typeof output.metadata === "object" && output.metadata) || {}
  const text = typeof (output && output.output) === "string" ? output.output : ""
  if (FILE_TOOLS.has(tool)) {
    const path = typeof meta.filepath === "string" && meta.filepath ? meta.filepath : args.filePath
    if (typeof path !== "string" || !path) return null
    // the text an edit or a write puts in (never the text it replaces): a memory's terms in it are use
    const written = tool === "read" ? "" : [args.content, args.newString].filter((t) => typeof t === "string").join("\n")
    return { session, tool, args: written ? { filePath: path, content: written.slice(0, MAX_INPUT) } : { filePath: path } }
  }
  if (tool === "grep") return text ? { session, tool, output: text } : null
  if (tool === "bash") {
    if (typeof args.command !== "string" || !args.command) return null
    const fields = {
      session,
      tool,
      args: { command: args.command },
      output: typeof meta.output === "string" ? meta.output : text,
    }
    if (Number.isInteger(meta.exit)) fields.exitCode = meta.exit
    return fields
  }
  return null
}

// The compaction summary among a session's messages (client.session.messages): the text parts of
// the last assistant message marked `summary: true`, or null when there is none.
export function summaryText(messages) {
  if (!Array.isArray(messages)) return null
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]
    if (m && m.info && m.info.role === "assistant" && m.info.summary === true) {
      return (m.parts || [])
        .filter((p) => p && p.type === "text" && typeof p.text === "string")
        .map((p) => p.text)
        .join("\n")
    }
  }
  return null
}

// OpenCode's own helper agents get the system transform too, with the session's id: the title
// generator (on a session's first prompt) and the compaction summariser (whose compaction prompt already
// holds the block and the hot state as background). Their prompt comes first in output.system; they get
// no memory, and their requests open no epoch.
const HELPER_AGENT_PROMPTS = [/^You are a title generator\b/, /^You are a context summarization agent\b/]

export function isHelperAgent(system) {
  const first = Array.isArray(system) ? system[0] : undefined
  return typeof first === "string" && HELPER_AGENT_PROMPTS.some((marker) => marker.test(first.trimStart()))
}

// The system entries to add: the frozen block as one entry, the hot state as the next one.
export function systemEntries(injection) {
  if (!injection) return []
  const block = typeof injection.block === "string" ? injection.block : ""
  const hot = typeof injection.hotState === "string" ? injection.hotState : ""
  if (block || hot) return [block, hot].filter(Boolean)
  return typeof injection.text === "string" && injection.text ? [injection.text] : []
}
