import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NewEvent, SessionEvent, StoredEvent } from "../../protocol/events.js";
import type { EventBus } from "../../src/events/bus.js";
import { newId } from "../../src/ids.js";
import type { Store } from "../../src/store/store.js";
import type { OpenedBackend } from "./backends.js";

const message = (n: number): NewEvent => ({ type: "message.user", data: { content: `m${n}` } });
const label = (event: SessionEvent) =>
  "seq" in event ? event.seq : `live:${event.type === "model.delta" ? event.data.text : event.type}`;
const delta = (text: string) => ({ type: "model.delta" as const, at: "", data: { text, attempt: 1 } });

/** Collects what a subscriber gets, and waits for it. */
function collector() {
  const seen: SessionEvent[] = [];
  const frames: string[] = [];
  return {
    seen,
    frames,
    listener: (event: SessionEvent, frame: string) => {
      seen.push(event);
      frames.push(frame);
    },
    until: async (count: number) => {
      for (let i = 0; i < 500 && seen.length < count; i++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      return seen.map(label);
    },
  };
}

/**
 * What every event bus must do: in one process and across many on PostgreSQL. Each bus comes with
 * the store of its backend, from which it reads where a session starts and what it missed; the
 * cases append to the store directly and publish themselves, in whatever order they like.
 */
export function describeEventBusConformance(name: string, open: () => Promise<OpenedBackend>): void {
  describe(`event bus conformance: ${name}`, () => {
    let backend: OpenedBackend;
    let store: Store;
    let bus: EventBus;

    beforeAll(async () => {
      backend = await open();
      ({ store, bus } = backend);
    });
    afterAll(async () => {
      await backend?.close();
    });

    async function session(): Promise<string> {
      const id = newId("ses");
      await store.createSession(
        {
          id,
          tenant_id: "acme",
          config: { model: "default", tools: [], max_steps: 4, metadata: {} },
          created_at: "",
        },
        {
          type: "session.created",
          data: { config: { model: "default", tools: [], max_steps: 4, metadata: {} } },
        },
      );
      return id;
    }

    /** Append without publishing: the caller publishes when and in what order it likes. */
    async function append(id: string, count: number): Promise<StoredEvent[][]> {
      const batches: StoredEvent[][] = [];
      for (let i = 0; i < count; i++) {
        const result = await store.append(id, [message(i)]);
        if (result.ok) batches.push(result.events);
      }
      return batches;
    }

    it("delivers stored events in seq order with no gap, whatever order they are published in", async () => {
      const id = await session();
      const client = collector();
      await bus.subscribe(id, client.listener);
      const batches = await append(id, 6);
      for (const index of [2, 0, 5, 1, 4, 3]) bus.publishStored(id, batches[index] as StoredEvent[]);
      expect(await client.until(6)).toEqual([2, 3, 4, 5, 6, 7]);
      // each once: a second publication of the same events is not delivered again
      bus.publishStored(id, batches[0] as StoredEvent[]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(client.seen.map(label)).toEqual([2, 3, 4, 5, 6, 7]);
    });

    it("puts live events after the stored event their publisher had seen", async () => {
      const id = await session();
      const client = collector();
      await bus.subscribe(id, client.listener);
      // published before the appends that follow it were made, as a turn does
      bus.publishLive(id, 1, delta("after 1"));
      const [first, second] = (await append(id, 2)) as [StoredEvent[], StoredEvent[]];
      bus.publishStored(id, second);
      bus.publishLive(id, 3, delta("after 3"));
      bus.publishStored(id, first);
      expect(await client.until(4)).toEqual(["live:after 1", 2, 3, "live:after 3"]);
    });

    it("gives a subscriber every event committed after it subscribed, and one frame each", async () => {
      const id = await session();
      await append(id, 3);
      const client = collector();
      await bus.subscribe(id, client.listener);
      const later = await append(id, 2);
      for (const batch of later.reverse()) bus.publishStored(id, batch);
      expect(await client.until(2)).toEqual([5, 6]);
      expect(client.frames[0]).toBe(
        `id: 5\nevent: message.user\ndata: ${JSON.stringify(client.seen[0])}\n\n`,
      );
    });

    it("reads from the store an event whose publication was lost, instead of stalling", async () => {
      const id = await session();
      const client = collector();
      await bus.subscribe(id, client.listener);
      const [, lost, after] = (await append(id, 3)) as StoredEvent[][];
      bus.publishStored(id, (await store.readEvents(id, 1, 1)) as StoredEvent[]);
      bus.publishStored(id, after as StoredEvent[]);
      expect(lost).toHaveLength(1);
      expect(await client.until(3)).toEqual([2, 3, 4]);
    });

    it("reads from the store a last event whose publication was lost, when a live event waits behind it", async () => {
      const id = await session();
      const client = collector();
      await bus.subscribe(id, client.listener);
      // stored, never published, and nothing stored after it: only the live event says it is there
      await append(id, 1);
      bus.publishLive(id, 2, delta("after 2"));
      expect(await client.until(2)).toEqual([2, "live:after 2"]);
    });

    it("stops delivering to a subscriber that left, and forgets a session nobody watches", async () => {
      const id = await session();
      const staying = collector();
      const leaving = collector();
      await bus.subscribe(id, staying.listener);
      const subscription = await bus.subscribe(id, leaving.listener);
      expect(bus.listenerCount(id)).toBe(2);
      subscription.unsubscribe();
      for (const batch of await append(id, 2)) bus.publishStored(id, batch);
      expect(await staying.until(2)).toEqual([2, 3]);
      expect(leaving.seen).toEqual([]);
      expect(bus.listenerCount(id)).toBe(1);
      const other = await session();
      bus.publishLive(other, 1, delta("nobody watches"));
      expect(bus.listenerCount(other)).toBe(0);
    });
  });
}
