// Runs one function of globs.ts or usage.ts in a worker thread, for tests that must be able to stop
// it: a function stuck in a regular expression blocks its thread, and only a worker can be
// terminated. workerData: { name, args }; posts back what the function returned.
import { parentPort, workerData } from "node:worker_threads";
import * as globs from "../globs";
import * as usage from "../usage";

const functions = { ...globs, ...usage } as unknown as Record<string, (...values: unknown[]) => unknown>;
const { name, args } = workerData as { name: string; args: unknown[] };
parentPort?.postMessage(functions[name](...args));
