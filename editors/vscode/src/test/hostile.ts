// Hostile input for the functions that read workspace text with regular expressions (globs.ts,
// usage.ts): a quadratic one blocks the extension host for minutes on 1 MB (the old pyproject.toml
// header check took 11.5 s on 100 KB of blank lines and did not finish on 1 MB in ten minutes).
// Each call runs in a worker thread (call.worker.ts), stopped when it has not answered within
// LIVENESS: a bound that only turns a hang into a failure (a linear scan answers in milliseconds),
// not a judgement of speed.
import * as path from "node:path";
import { Worker } from "node:worker_threads";

export const MB = 1_000_000;
const LIVENESS = 120_000;

/** What the function `name` of globs.ts or usage.ts returns for `args`, computed in a worker thread. */
export function inWorker(name: string, ...args: unknown[]): Promise<unknown> {
  const worker = new Worker(path.join(__dirname, "call.worker.js"), { workerData: { name, args } });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new Error(`${name} did not return within ${LIVENESS / 1000} s on 1 MB: not linear`));
    }, LIVENESS);
    worker.once("message", (value) => {
      clearTimeout(timer);
      void worker.terminate();
      resolve(value);
    });
    worker.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
