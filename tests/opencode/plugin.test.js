// The OpenCode plugin against a fake OpenCode client and a real `workmem serve` (node --test).
// WORKMEM_COMMAND (a JSON array) names the workmem command; default: `workmem` on PATH.
// tests/adapters/test_opencode_plugin.py runs this file with a scratch WORKMEM_HOME and a fixed WORKMEM_NOW.
import assert from "node:assert/strict"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { after, describe, test } from "node:test"

import { WorkmemPlugin } from "../../adapters/hosts/opencode/index.js"
import {
  isHelperAgent,
  messageFields,
  notePart,
  replyText,
  summaryText,
  systemEntries,
  toolFields,
  userText,
} from "../../adapters/hosts/opencode/mapping.js"
import { createHooks, recallPart } from "../../adapters/hosts/opencode/plugin.js"
import { ServeClient } from "../../adapters/hosts/opencode/serve-client.js"

const COMMAND = process.env.WORKMEM_COMMAND ? JSON.parse(process.env.WORKMEM_COMMAND) : ["workmem"]
const scratch = mkdtempSync(join(tmpdir(), "workmem-opencode-test-"))
// the plugin's child inherits the environment: never let it touch the real data home
process.env.WORKMEM_HOME = process.env.WORKMEM_HOME || join(scratch, "home")
const ENV = { ...process.env }
after(() => rmSync(scratch, { recursive: true, force: true }))

// every evidence event of every workspace under the scratch WORKMEM_HOME
function evidenceLines() {
  const root = join(process.env.WORKMEM_HOME, "workspaces")
  if (!existsSync(root)) return []
  return readdirSync(root).flatMap((key) => {
    const file = join(root, key, "evidence", "events.jsonl")
    return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []
  })
}

const SUMMARY = [
  "## Goal",
  "Ship the deploy script.",
  "",
  "Memory candidates:",
  "- [decision] Deploys use blue-green switching via src/deploy.sh because rollbacks must be instant",
  "- [reference] Staging dashboard lives at grafana.internal/d/deploys",
].join("\n")

function fakeClient({ sessions = {}, messages = {} } = {}) {
  const logs = []
  return {
    logs,
    app: { log: async ({ body }) => logs.push(body.message) },
    session: {
      get: async ({ path }) => ({ data: sessions[path.id] || { id: path.id } }),
      messages: async ({ path }) => ({ data: messages[path.id] || [] }),
    },
  }
}

function userMessage(sessionID, id, text, extra = []) {
  return [
    { sessionID },
    {
      message: { id, role: "user", sessionID },
      parts: [{ type: "text", text, id: `prt_${id}`, messageID: id, sessionID }, ...extra],
    },
  ]
}

async function system(hooks, sessionID) {
  const output = { system: ["You are the agent."] }
  await hooks["experimental.chat.system.transform"]({ sessionID, model: { id: "m" } }, output)
  return output.system.slice(1)
}

describe("mapping", () => {
  test("user text skips synthetic and ignored parts", () => {
    const parts = [
      { type: "text", text: "remember: a" },
      { type: "text", text: "added by opencode", synthetic: true },
      { type: "text", text: "hidden", ignored: true },
      { type: "file", text: "not text" },
    ]
    assert.equal(userText(parts), "remember: a")
    assert.equal(userText(undefined), "")
  })

  test("chat.message takes the id from output.message", () => {
    const [input, output] = userMessage("ses_1", "msg_1", "hello")
    assert.deepEqual(messageFields(input, output), { session: "ses_1", text: "hello", messageId: "msg_1" })
    assert.equal(messageFields({ sessionID: "ses_1" }, { parts: [] }), null)
  })

  test("tool results: absolute file path, bash exit code, other tools ignored", () => {
    const write = toolFields(
      { tool: "write", sessionID: "s", args: { filePath: "src/a.sh", content: "x".repeat(9999) } },
      { output: "Wrote file successfully.", metadata: { filepath: "/p/src/a.sh" } },
    )
    const content = "x".repeat(9999) // what a write puts in: read for the memories it uses
    assert.deepEqual(write, { session: "s", tool: "write", args: { filePath: "/p/src/a.sh", content } })
    const edit = toolFields(
      { tool: "edit", sessionID: "s", args: { filePath: "a.py", oldString: "old()", newString: "new()" } },
      { output: "Edit applied.", metadata: {} },
    )
    assert.deepEqual(edit.args, { filePath: "a.py", content: "new()" }) // never the replaced text
    const read = toolFields({ tool: "read", sessionID: "s", args: { filePath: "a.py" } }, { output: "x", metadata: {} })
    assert.deepEqual(read.args, { filePath: "a.py" })
    const bash = toolFields(
      { tool: "bash", sessionID: "s", args: { command: "make" } },
      { output: "Error: x\n", metadata: { output: "Error: x\n", exit: 3 } },
    )
    assert.deepEqual(bash, { session: "s", tool: "bash", args: { command: "make" }, output: "Error: x\n", exitCode: 3 })
    const noExit = toolFields({ tool: "bash", sessionID: "s", args: { command: "ls" } }, { output: "a", metadata: {} })
    assert.equal("exitCode" in noExit, false)
    assert.equal(toolFields({ tool: "webfetch", sessionID: "s", args: {} }, { output: "x" }), null)
  })

  test("the summary is the last assistant message marked summary", () => {
    const messages = [
      { info: { role: "assistant", summary: true }, parts: [{ type: "text", text: "old" }] },
      { info: { role: "user" }, parts: [{ type: "text", text: "hi" }] },
      { info: { role: "assistant", summary: true }, parts: [{ type: "text", text: "a" }, { type: "tool" }, { type: "text", text: "b" }] },
      { info: { role: "assistant" }, parts: [{ type: "text", text: "after" }] },
    ]
    assert.equal(summaryText(messages), "a\nb")
    assert.equal(summaryText([]), null)
  })

  test("a note becomes a synthetic text part of the user's message", () => {
    const [, output] = userMessage("ses_1", "msg_1", "forget that x")
    assert.deepEqual(notePart({ decisions: [], note: "N" }, output), {
      type: "text", text: "N", synthetic: true, id: "prt_msg_1wm", messageID: "msg_1", sessionID: "ses_1",
    })
    assert.equal(notePart({ decisions: [] }, output), null)
    assert.equal(notePart(null, output), null)
  })

  test("the reply is the last assistant message's own text", () => {
    const assistant = (parts, extra = {}) => ({ info: { role: "assistant", ...extra }, parts })
    assert.equal(replyText([assistant([{ type: "text", text: "used mem_1_a" }, { type: "tool" }, { type: "text", text: "b" }])]), "used mem_1_a\nb")
    assert.equal(replyText([assistant([{ type: "text", text: "x" }]), { info: { role: "user" }, parts: [] }]), null)
    assert.equal(replyText([assistant([{ type: "text", text: "sum" }], { summary: true })]), null)
    assert.equal(replyText(undefined), null)
  })

  test("a recall part only when something was recalled", () => {
    const output = { parts: [{ type: "text", text: "q", id: "prt_1", messageID: "m", sessionID: "s" }] }
    assert.deepEqual(recallPart({ recalled: "R" }, output), {
      type: "text", text: "R", synthetic: true, messageID: "m", sessionID: "s", id: "prt_1wr",
    })
    assert.equal(recallPart({ recalled: "" }, output), null)
    assert.equal(recallPart(undefined, output), null)
    assert.equal(recallPart({ recalled: "R" }, {}), null)
  })

  test("the block and the hot state are separate system entries", () => {
    assert.deepEqual(systemEntries({ text: "B\n\nH", block: "B", hotState: "H" }), ["B", "H"])
    assert.deepEqual(systemEntries({ text: "H", block: "", hotState: "H" }), ["H"])
    assert.deepEqual(systemEntries(null), [])
  })
})

describe("with a real workmem serve", () => {
  const project = mkdtempSync(join(scratch, "proj-"))
  const sessions = { ses_child: { id: "ses_child", parentID: "ses_a" } }
  const messages = {
    ses_a: [
      { info: { role: "user" }, parts: [{ type: "text", text: "hi" }] },
      { info: { role: "assistant", summary: true, mode: "compaction" }, parts: [{ type: "text", text: SUMMARY }] },
    ],
  }
  const client = fakeClient({ sessions, messages })
  let hooks
  let probe

  test("a whole OpenCode session", async () => {
    hooks = await WorkmemPlugin({ client, directory: project, worktree: project }, { command: COMMAND })
    probe = new ServeClient({ command: COMMAND, env: ENV })

    await hooks["chat.message"](...userMessage("ses_a", "msg_1", "remember this: we deploy with blue-green, never on Fridays"))
    const first = await system(hooks, "ses_a")
    assert.ok(first.some((s) => s.includes("we deploy with blue-green, never on Fridays")), first.join("\n---\n"))

    await hooks["tool.execute.after"](
      { tool: "write", sessionID: "ses_a", callID: "c1", args: { filePath: "src/deploy.sh", content: "#!/bin/sh" } },
      { title: "src/deploy.sh", output: "Wrote file successfully.", metadata: { filepath: join(project, "src/deploy.sh") } },
    )
    await hooks["tool.execute.after"](
      { tool: "bash", sessionID: "ses_a", callID: "c2", args: { command: "sh src/deploy.sh --check" } },
      { title: "check", output: "Error: deploy check failed in src/deploy.sh\n", metadata: { exit: 3, output: "Error: deploy check failed in src/deploy.sh\n" } },
    )
    const later = await system(hooks, "ses_a")
    assert.ok(later.some((s) => s.includes("src/deploy.sh") && s.includes("deploy check failed")), later.join("\n---\n"))

    const compacting = { context: [] }
    await hooks["experimental.session.compacting"]({ sessionID: "ses_a" }, compacting)
    assert.match(compacting.prompt, /Memory candidates/)

    await hooks.event({ event: { type: "session.compacted", properties: { sessionID: "ses_a" } } })
    const listed = (await probe.request("list", { workspace: project })).memories.map((m) => m.text)
    assert.ok(listed.includes("we deploy with blue-green, never on Fridays"), listed)
    assert.ok(listed.some((t) => t.includes("blue-green switching")), listed)
    assert.ok(listed.some((t) => t.includes("grafana.internal/d/deploys")), listed)

    // a new session starts with the block as one system entry
    await hooks["chat.message"](...userMessage("ses_b", "msg_2", "remember this: staging lives at stage.internal.example"))
    const fresh = await system(hooks, "ses_b")
    assert.ok(fresh[0].startsWith("Workspace memory"), fresh[0])
    assert.ok(fresh[0].includes("grafana.internal/d/deploys"))
    assert.ok(fresh[1].includes("stage.internal.example"), fresh.join("\n---\n"))

    // session.idle is not an end; session.deleted is
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_b" } } })
    let texts = (await probe.request("list", { workspace: project })).memories.map((m) => m.text)
    assert.ok(!texts.includes("staging lives at stage.internal.example"))
    await hooks.event({ event: { type: "session.deleted", properties: { info: { id: "ses_b", directory: project } } } })
    texts = (await probe.request("list", { workspace: project })).memories.map((m) => m.text)
    assert.ok(texts.includes("staging lives at stage.internal.example"), texts)
    assert.deepEqual(client.logs, [])
  })

  test("forget and correct in chat.message: done, and the note joins the message as a synthetic part", async () => {
    await probe.request("remember", { workspace: project, text: "We install dependencies with yarn in this repo", type: "project" })
    const [input, output] = userMessage("ses_c", "msg_c1", "that's no longer true: the staging dashboard at grafana.internal/d/deploys")
    await hooks["chat.message"](input, output)
    const note = output.parts.at(-1)
    assert.equal(note.synthetic, true)
    assert.match(note.text, /forgot mem_\S+ .*grafana\.internal\/d\/deploys/)
    assert.equal(note.messageID, "msg_c1")
    const [input2, output2] = userMessage("ses_c", "msg_c2", "actually, use pnpm instead of yarn")
    await hooks["chat.message"](input2, output2)
    assert.match(output2.parts.at(-1).text, /replaced mem_\S+ "We install dependencies with yarn/)
    const texts = (await probe.request("list", { workspace: project })).memories.map((m) => m.text)
    assert.ok(!texts.some((t) => t.includes("grafana.internal/d/deploys")), texts)
    assert.ok(texts.includes("We install dependencies with pnpm in this repo"), texts)
    assert.ok(!texts.includes("We install dependencies with yarn in this repo"), texts)
    const [input3, output3] = userMessage("ses_c", "msg_c3", "please run the tests")
    await hooks["chat.message"](input3, output3)
    assert.equal(output3.parts.length, 1) // no request, no note
    assert.deepEqual(client.logs, [])
  })

  test("use: a memory's rare term in a tool's input and its id in the reply reinforce it, once", async () => {
    const checks = await probe.request("remember", { workspace: project, text: "Run the full checks with make check-all", type: "project" })
    const bench = await probe.request("remember", { workspace: project, text: "Benchmarks run with python -m bench.run --runs 5", type: "project" })
    const idle = await probe.request("remember", { workspace: project, text: "The nightly job lives in .github/workflows/nightly.yml", type: "project" })
    await system(hooks, "ses_u") // the block shows them
    const bash = (command, callID) => hooks["tool.execute.after"](
      { tool: "bash", sessionID: "ses_u", callID, args: { command } },
      { title: command, output: "ok\n", metadata: { exit: 0, output: "ok\n" } },
    )
    await bash("make check-all", "u1")
    await bash("make check-all", "u2")
    messages.ses_u = [
      { info: { role: "user" }, parts: [{ type: "text", text: "speed?" }] },
      { info: { role: "assistant" }, parts: [{ type: "text", text: `Measured as ${bench.id} says.` }] },
    ]
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_u" } } })
    const used = evidenceLines()
      .filter((e) => e.type === "memory_used")
      .map((e) => [e.memory.memoryId, e.details.signal, e.details.where])
    assert.deepEqual(used, [[checks.id, "rare_term", "tool:bash"], [bench.id, "cited_id", "reply"]])
    assert.ok(!used.some(([id]) => id === idle.id)) // shown, not used
    assert.deepEqual(client.logs, [])
  })

  test("sub-agent sessions get no injection and cause no writes", async () => {
    await hooks.event({ event: { type: "session.created", properties: { info: { id: "ses_sub", parentID: "ses_a" } } } })
    await hooks["chat.message"](...userMessage("ses_sub", "msg_3", "remember this: sub-agents never write memories"))
    assert.deepEqual(await system(hooks, "ses_sub"), [])
    assert.deepEqual(await system(hooks, "ses_child"), []) // parent found with client.session.get
    const texts = (await probe.request("list", { workspace: project, all: true })).memories.map((m) => m.text)
    assert.ok(!texts.includes("sub-agents never write memories"))
  })

  test("just-in-time recall adds a synthetic part to the prompt's message, once", async () => {
    const refs = [
      "The API reference for payments is at docs/api/payments.md",
      "Grafana dashboards for the checkout service are in ops/grafana/checkout.json",
      "The design system tokens are documented in packages/ui/TOKENS.md",
      "Feature flag definitions live in config/flags.yaml",
      "The on-call rotation schedule is kept in the team wiki under Operations",
      "Release notes template is at .github/RELEASE_TEMPLATE.md",
    ]
    for (const text of refs) await probe.request("remember", { workspace: project, text, type: "reference" })
    const runbook = "The staging database failover runbook lives in docs/runbooks/failover.md"
    await probe.request("remember", { workspace: project, text: runbook, type: "reference", importance: "low" })
    const block = (await system(hooks, "ses_r")).join("\n")
    assert.ok(!block.includes(runbook), block)
    const [input, output] = userMessage("ses_r", "msg_r1", "where is the failover runbook for the staging database?")
    await hooks["chat.message"](input, output)
    assert.equal(output.parts.length, 2)
    assert.equal(output.parts[1].synthetic, true)
    assert.equal(output.parts[1].messageID, "msg_r1")
    assert.ok(output.parts[1].text.includes(runbook), output.parts[1].text)
    const [again, second] = userMessage("ses_r", "msg_r2", "the failover runbook for the staging database, again")
    await hooks["chat.message"](again, second)
    assert.equal(second.parts.length, 1) // each memory once per session
  })

  test("the title generator and the compaction summariser get no memory", async () => {
    for (const prompt of [
      "You are a title generator. You output ONLY a thread title. Nothing else.",
      "You are a context summarization agent. You are given a conversation between a user and an agent.",
    ]) {
      const output = { system: [prompt] }
      await hooks["experimental.chat.system.transform"]({ sessionID: "ses_a", model: { id: "m" } }, output)
      assert.deepEqual(output.system, [prompt])
    }
    assert.ok(!isHelperAgent(["You are opencode, an interactive CLI tool"]))
    assert.ok(!isHelperAgent([]) && !isHelperAgent(null))
  })

  test("a request without a session id (the title agent) is skipped", async () => {
    const output = { system: ["title prompt"] }
    await hooks["experimental.chat.system.transform"]({ model: { id: "m" } }, output)
    assert.deepEqual(output.system, ["title prompt"])
  })

  after(async () => {
    await hooks?.dispose()
    probe?.close()
  })
})

describe("sessions that never end (docs/decisions.md#d22)", () => {
  // OpenCode keeps a session open: a memory asked for in session A reaches a new session B of the
  // same workspace once A has been idle for five minutes. One serve child per moment (WORKMEM_NOW).
  const project = mkdtempSync(join(scratch, "idle-"))
  const at = (iso) => {
    const serve = new ServeClient({ command: COMMAND, env: { ...ENV, WORKMEM_NOW: iso } })
    return createHooks({ client: fakeClient(), directory: project }, { serve })
  }
  const MEMORY = "we deploy with blue-green, never on Fridays"

  test("a request in A reaches a new session B the same day, after A is idle for five minutes", async () => {
    const morning = at("2026-05-01T09:00:00Z")
    await morning["chat.message"](...userMessage("ses_a", "msg_a1", `remember this: ${MEMORY}`))
    assert.ok((await system(morning, "ses_a")).some((s) => s.includes(MEMORY)))
    await morning.dispose()

    const soon = at("2026-05-01T09:03:00Z") // A may still be in its turn: B waits
    assert.ok(!(await system(soon, "ses_b")).some((s) => s.includes(MEMORY)))
    await soon.dispose()

    const later = at("2026-05-01T09:20:00Z")
    const fresh = await system(later, "ses_c")
    assert.ok(fresh[0].startsWith("Workspace memory") && fresh[0].includes(MEMORY), fresh.join("\n---\n"))
    // A's next prompt shows it in its block, no longer as pending
    await later["chat.message"](...userMessage("ses_a", "msg_a2", "what next?"))
    const back = await system(later, "ses_a")
    assert.ok(back[0].includes(MEMORY) && !back.slice(1).some((s) => s.includes(MEMORY)), back.join("\n---\n"))
    await later.dispose()
  })
})

describe("instruction files (docs/decisions.md#d22)", () => {
  test("what the project's AGENTS.md says is not injected again", async () => {
    const project = mkdtempSync(join(scratch, "rules-"))
    writeFileSync(join(project, "AGENTS.md"), "# Rules\n\n- Always use pnpm for package installs.\n")
    const env = { ...ENV, HOME: mkdtempSync(join(scratch, "userhome-")) }
    const serve = new ServeClient({ command: COMMAND, env })
    const hooks = createHooks({ client: fakeClient(), directory: project }, { serve })
    for (const text of ["Always use pnpm for package installs", "Never deploy on Fridays"]) {
      await serve.request("remember", { workspace: project, text, type: "feedback" })
    }
    const shown = await system(hooks, "ses_rules")
    assert.ok(shown[0].includes("Never deploy on Fridays"), shown.join("\n---\n"))
    assert.ok(!shown.some((s) => s.includes("pnpm")), shown.join("\n---\n"))
    await hooks.dispose()
  })
})

describe("when workmem is not there", () => {
  test("workmem missing: OpenCode keeps working, one log line, restart at most once a minute", async () => {
    const client = fakeClient()
    let now = 1_000_000
    const serve = new ServeClient({ command: [join(scratch, "no-such-workmem")], log: (m) => client.logs.push(m), now: () => now })
    const hooks = createHooks({ client, directory: scratch }, { serve })
    for (let i = 0; i < 3; i++) {
      await hooks["chat.message"](...userMessage("ses_x", `msg_${i}`, "remember this: nothing"))
      const output = { system: ["agent"] }
      await hooks["experimental.chat.system.transform"]({ sessionID: "ses_x" }, output)
      assert.deepEqual(output.system, ["agent"])
      const compacting = { context: [] }
      await hooks["experimental.session.compacting"]({ sessionID: "ses_x" }, compacting)
      assert.equal(compacting.prompt, undefined)
      await hooks.event({ event: { type: "session.deleted", properties: { info: { id: "ses_x" } } } })
    }
    assert.equal(serve.starts, 1)
    assert.equal(client.logs.length, 1)
    assert.match(client.logs[0], /not found on PATH|ENOENT/)
    now += 61_000
    assert.equal(await serve.request("hello"), null)
    assert.equal(serve.starts, 2)
    assert.equal(client.logs.length, 1) // still the same outage
    await hooks.dispose()
  })

  test("a child that dies or hangs resolves to nothing", async () => {
    const logs = []
    const dies = new ServeClient({ command: [process.execPath, "-e", "process.exit(3)"], log: (m) => logs.push(m) })
    assert.equal(await dies.request("hello"), null)
    assert.match(logs[0], /exited \(3\)/)
    const hangs = new ServeClient({
      command: [process.execPath, "-e", "setInterval(() => {}, 1000)"],
      log: (m) => logs.push(m),
      timeoutMs: 100,
    })
    assert.equal(await hangs.request("hello"), null)
    assert.match(logs.at(-1), /no answer within 100 ms/)
    hangs.close()
  })

  test("a real child answers hello and error responses become null", async () => {
    const logs = []
    const serve = new ServeClient({ command: COMMAND, env: ENV, log: (m) => logs.push(m) })
    const hello = await serve.request("hello")
    assert.equal(hello.protocol, 1)
    assert.equal(await serve.request("explode"), null)
    assert.equal(await serve.request("explode"), null)
    assert.equal(logs.length, 1) // the same error again is not logged again
    assert.match(logs[0], /unknown_op/)
    serve.close()
  })
})
