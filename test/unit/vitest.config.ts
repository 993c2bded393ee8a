// Pure code in Node, sharing one module graph per worker (project.ts, isolation.ts).
import { unitProject } from "./project";

export default unitProject({ name: "unit", isolate: false });
