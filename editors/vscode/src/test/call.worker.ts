// Runs one function of globs.ts in a worker thread, for tests that must be able to stop it: a
// function stuck in a regular expression blocks its thread, and only a worker can be terminated.
// workerData: { name, args }; posts back what the function returned.
import { parentPort, workerData } from "node:worker_threads";
import * as globs from "../globs";

const { name, args } = workerData as { name: keyof typeof globs; args: unknown[] };
const fn = globs[name] as (...values: unknown[]) => unknown;
parentPort?.postMessage(fn(...args));
