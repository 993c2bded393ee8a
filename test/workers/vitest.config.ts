// The workers project: files share one workerd per pool worker (test/workers/project.ts says why).
import { workersProject } from "./project";

export default workersProject({ name: "workers", isolate: false });
