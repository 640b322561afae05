import { LocalEventBus } from "../../src/events/local-bus.js";
import { describeEventBusConformance } from "./event-bus-conformance.js";

describeEventBusConformance("in-process", (store) => new LocalEventBus(store, { gapWaitMs: 50 }));
