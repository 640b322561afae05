import { rmSync } from "node:fs";

/**
 * What `started` gives; when it fails, `dir` (the one made for it) is removed before the error
 * goes on, so a start that fails, expectedly or not, leaves nothing in the temporary directory.
 */
export async function removedOnFailure<T>(dir: string, started: Promise<T>): Promise<T> {
  try {
    return await started;
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
