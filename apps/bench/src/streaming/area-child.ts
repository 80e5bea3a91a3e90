// The streaming area in a child process on Node 24 (see node24.ts): runs the rounds here and
// sends the area's result back over IPC, as JSON text so NaN survives as "NaN".

import { jsonReplacer } from "../report.js";
import { runStreamingHere, type StreamingConfig } from "./run.js";

const config = JSON.parse(process.argv[2] as string) as StreamingConfig;
const result = await runStreamingHere(config);
process.send?.(JSON.stringify(result, jsonReplacer), () => process.exit(0));
