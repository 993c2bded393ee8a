// The workers files that need empty storage of their own (ISOLATED in test/workers/isolated.ts).
import { workersProject } from "./project";

export default workersProject({ name: "workers-isolated", isolate: true });
