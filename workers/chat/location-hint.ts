// The location hint for an object a request creates: `request.cf` is typed for both incoming and
// outgoing requests, and only an incoming one carries where it came from.
import { locationHintFor, type LocationHint, type RequestOrigin } from "../../core/location-hint";

export const requestLocationHint = (req: Request): LocationHint | null =>
  locationHintFor(req.cf as RequestOrigin | undefined);
