// The unit files that replace a module or a global, each in a fresh module graph (isolation.ts).
import { unitProject } from "./project";

export default unitProject({ name: "unit-isolated", isolate: true });
