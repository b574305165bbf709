// The real-time message of spec 2.1 / 6.1: "Timeout <endpoint>", "Timeout", "<endpoint>" or "".
// Same strict grammar as realtime/message.py; both are tested against realtime/vectors.json.

export const TIMEOUT = "Timeout";
export const MAX_ENDPOINT_CHARS = 256;
const PARAMETER_PATTERN = "[1-9][0-9]{0,15}";
const TEMPLATE_PARAMETER = /\{[^{}/]+\}/g;

export class InvalidMessage extends Error {}

const escapeRegex = (text) => text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");

// Decides whether a path is a PATCH endpoint of the service, from route templates such as
// "/profile/appointments/{appointment-id}/approve".
export function endpointMatcher(templates) {
  const alternatives = [...new Set(templates)].sort().map((template) => {
    if (!template.startsWith("/")) throw new Error(`a PATCH template is an absolute path: ${template}`);
    return template.split(TEMPLATE_PARAMETER).map(escapeRegex).join(PARAMETER_PATTERN);
  });
  if (!alternatives.length) return () => false;
  const regex = new RegExp(`^(?:${alternatives.map((a) => `(?:${a})`).join("|")})$`);
  return (path) => typeof path === "string" && path.length <= MAX_ENDPOINT_CHARS && regex.test(path);
}

function checkEndpoint(endpoint, isEndpoint) {
  if (!endpoint.startsWith("/") || endpoint.length > MAX_ENDPOINT_CHARS || !isEndpoint(endpoint)) {
    throw new InvalidMessage(`not a PATCH endpoint of the service: ${endpoint.slice(0, 80)}`);
  }
}

// Python's str.strip() whitespace, so "a\u00a0" is refused here as it is there.
const hasOuterWhitespace = (part) => /^[\s\u001c-\u001f\u0085]|[\s\u001c-\u001f\u0085]$/u.test(part);

// Returns {timeout: boolean, endpoint: string|null}; throws InvalidMessage for anything else.
export function parseMessage(text, isEndpoint) {
  if (text === "") return { timeout: false, endpoint: null };
  const parts = text.split(" ");
  if (parts.length > 2) throw new InvalidMessage("at most two space-separated components");
  if (parts.some((p) => p === "" || hasOuterWhitespace(p))) {
    throw new InvalidMessage("components are separated by exactly one space, without other whitespace");
  }
  if (parts.length === 2) {
    const [keyword, endpoint] = parts;
    if (keyword !== TIMEOUT) throw new InvalidMessage(`the first of two components must be ${TIMEOUT}`);
    checkEndpoint(endpoint, isEndpoint);
    return { timeout: true, endpoint };
  }
  const [only] = parts;
  if (only === TIMEOUT) return { timeout: true, endpoint: null };
  checkEndpoint(only, isEndpoint);
  return { timeout: false, endpoint: only };
}
