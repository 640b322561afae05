import { afterAll, describe, expect, it } from "vitest";
import type { TurnLeases } from "../../src/turns/leases.js";
import type { OpenedBackend } from "./backends.js";

/**
 * What every implementation of turn leases must do, in one process and on PostgreSQL. Each case
 * opens a backend of its own, so that leases one case holds never meet another's.
 */
export function describeTurnLeasesConformance(name: string, open: () => Promise<OpenedBackend>): void {
  describe(`turn leases conformance: ${name}`, () => {
    const opened: OpenedBackend[] = [];
    const makeLeases = async (): Promise<TurnLeases> => {
      const backend = await open();
      opened.push(backend);
      return backend.leases;
    };
    afterAll(async () => {
      for (const backend of opened) {
        await backend.leases.stopAll("test over");
        await backend.close();
      }
    });

    it("gives a session's turn to one owner at a time", async () => {
      const leases = await makeLeases();
      const lease = await leases.acquire("ses_a");
      expect(lease?.sessionId).toBe("ses_a");
      expect(await leases.acquire("ses_a")).toBeUndefined();
      const other = await leases.acquire("ses_b");
      expect(other).toBeDefined();
      expect(leases.held()).toBe(2);
      lease?.release();
      const again = await leases.acquire("ses_a");
      expect(again).toBeDefined();
      again?.release();
      other?.release();
    });

    it("reaches the owner with the reason, and says when the turn has ended", async () => {
      const leases = await makeLeases();
      const lease = await leases.acquire("ses_stop");
      if (!lease) throw new Error("no lease");
      lease.signal.addEventListener("abort", () => setTimeout(() => lease.release(), 20));
      expect(await leases.stop("ses_stop", "closed", 5000)).toBe("ended");
      expect(lease.signal.reason).toBe("closed");
      expect(leases.held()).toBe(0);
    });

    it("answers at once when a turn has no owner, and within the wait when its owner does not end it", async () => {
      const leases = await makeLeases();
      expect(await leases.stop("ses_nobody", "interrupted", 5000)).toBe("no_owner");
      const stuck = await leases.acquire("ses_stuck");
      expect(await leases.stop("ses_stuck", "interrupted", 50)).toBe("still_running");
      expect(stuck?.signal.aborted).toBe(true);
      stuck?.release();
    });

    it("names the running sessions whose turn has no owner", async () => {
      const leases = await makeLeases();
      const owned = await leases.acquire("ses_owned");
      expect(await leases.ownerless(["ses_owned", "ses_orphan"])).toEqual(["ses_orphan"]);
      owned?.release();
    });

    it("does not free a newer owner when an older lease is released again", async () => {
      const leases = await makeLeases();
      const first = await leases.acquire("ses_again");
      first?.release();
      const second = await leases.acquire("ses_again");
      first?.release();
      expect(await leases.acquire("ses_again")).toBeUndefined();
      second?.release();
    });

    it("stops every turn it holds and waits for each to end", async () => {
      const leases = await makeLeases();
      const held = await Promise.all(["ses_1", "ses_2", "ses_3"].map((id) => leases.acquire(id)));
      const ended: string[] = [];
      for (const lease of held) {
        lease?.signal.addEventListener("abort", () =>
          setTimeout(() => {
            ended.push(lease.sessionId);
            lease.release();
          }, 10),
        );
      }
      await leases.stopAll("shutdown");
      expect(ended.sort()).toEqual(["ses_1", "ses_2", "ses_3"]);
      expect(leases.held()).toBe(0);
    });
  });
}
