import { LocalTurnLeases } from "../../src/turns/local-leases.js";
import { describeTurnLeasesConformance } from "./turn-leases-conformance.js";

describeTurnLeasesConformance("in-process", () => new LocalTurnLeases());
