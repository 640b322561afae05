import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenedBackend } from "./backends.js";

/**
 * What every implementation of inspection grants must do, in one process and on PostgreSQL: a
 * token reads its own session, until its call returns. A grant is made for a turn, so each case
 * holds the turn's lease as Brain does.
 */
export function describeInspectionGrantsConformance(name: string, open: () => Promise<OpenedBackend>): void {
  describe(`inspection grants conformance: ${name}`, () => {
    let backend: OpenedBackend;
    beforeAll(async () => {
      backend = await open();
    });
    afterAll(async () => {
      await backend?.leases.stopAll("test over");
      await backend?.close();
    });

    /** A grant for a call of a turn of `sessionId`, under that turn's lease. */
    async function grantFor(sessionId: string) {
      const lease = await backend.leases.acquire(sessionId);
      if (!lease) throw new Error(`no lease for ${sessionId}`);
      const grant = await backend.inspection.issue("acme", sessionId, lease.token);
      return { grant, lease };
    }

    it("lets a token read its own session, and knows nothing of any other token", async () => {
      const { grant, lease } = await grantFor("ses_inspected");
      expect(grant.token).toMatch(/^bit_[A-Za-z0-9_-]{43}$/);
      const principal = await backend.inspection.principalFor(grant.token);
      expect(principal).toMatchObject({ tenantId: "acme", sessionId: "ses_inspected" });
      expect(principal?.revoked.aborted).toBe(false);
      expect(await backend.inspection.principalFor(`${grant.token}x`)).toBeUndefined();
      expect(await backend.inspection.principalFor("bit_made_up")).toBeUndefined();
      grant.release();
      lease.release();
    });

    it("stops a token the moment its call returns, ending what was opened with it", async () => {
      const { grant, lease } = await grantFor("ses_released");
      const principal = await backend.inspection.principalFor(grant.token);
      const before = backend.inspection.size;
      grant.release();
      expect(principal?.revoked.aborted).toBe(true);
      expect(backend.inspection.size).toBe(before - 1);
      // refused at once here, whether or not the database has forgotten the grant yet
      expect(await backend.inspection.principalFor(grant.token)).toBeUndefined();
      // a second release changes nothing
      grant.release();
      expect(backend.inspection.size).toBe(before - 1);
      lease.release();
    });

    it("never keeps a token in the clear", async () => {
      const { grant, lease } = await grantFor("ses_hashed");
      expect(JSON.stringify(await backend.inspection.principalFor(grant.token))).not.toContain(grant.token);
      grant.release();
      lease.release();
    });
  });
}
