// workmem for OpenCode: durable working memory (docs/hosts.md, "OpenCode"). Plain ESM, no build step,
// no dependencies; starts one `workmem serve` child (`workmem` on PATH, or the plugin option
// `command`, e.g. ["/path/to/workmem"]). Only the plugin itself is exported: OpenCode loads every
// export of this module as a plugin.
import { createHooks } from "./plugin.js"

export const WorkmemPlugin = async (ctx, options) => createHooks(ctx, options || {})
