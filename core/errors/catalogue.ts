// The one closed list of error codes (spec "Errors" + decisions.md). Every edge mapper (HTTP,
// MCP) reads status and retryability from here; nothing else decides a status code.
/** What a customer can do about an exhausted balance: they cannot buy credits themselves. */
export const askForCredits = 'Your organization cannot add credits itself: ask your account manager for a top-up.';
/** What a customer can do about a reached call cap before it resets. */
export const askForCap = 'to call before then, ask your account manager to raise the cap.';
/** limit_reached's first sentence; the refusal adds when the cap resets (core/access/allowance-refusal.ts). */
export const capReachedReason = 'The organization reached its call cap for this billing period.';

export const errorCatalogue = {
  missing_api_key: { status: 401, retryable: false, message: 'No API key: send Authorization: Bearer <API_KEY>.' },
  invalid_api_key: { status: 401, retryable: false, message: 'The API key is not valid: it is unknown, revoked, expired, or not an organization key.' },
  // Credits, caps and plans are changed by the service's operators only (docs/billing.md, the
  // operator's dashboard pages): an organization's admins cannot, so these say whom to ask.
  credits_exhausted: { status: 402, retryable: false, message: `The organization's credit balance cannot cover this call. ${askForCredits}` },
  limit_reached: { status: 429, retryable: true, message: `${capReachedReason} It resets at the start of the next month (UTC); ${askForCap}` },
  client_not_configured: { status: 403, retryable: false, message: 'The organization has no plan yet: the service has not been provisioned for it. Ask your account manager to finish setting it up.' },
  not_entitled: { status: 403, retryable: false, message: "This endpoint is not included in the organization's plan. GET /openapi.json with this key lists the endpoints it may call; ask your account manager about a plan that includes this one." },
  unknown_endpoint: { status: 404, retryable: false, message: 'No endpoint matches this method and path.' },
  not_found: { status: 404, retryable: false, message: 'No company matches the identifier.' },
  invalid_params: { status: 422, retryable: false, message: 'One or more parameters are invalid.' },
  rate_limited: { status: 429, retryable: true, message: "Rate limit exceeded: the organization's keys together made too many calls. Wait before retrying." },
  internal_error: { status: 500, retryable: true, message: 'An internal error occurred. It has been logged; retry later or contact support with the request id.' },
  upstream_error: { status: 502, retryable: true, message: 'The company data store failed to answer. Retry later.' },
  auth_unavailable: { status: 503, retryable: true, message: 'Key validation is temporarily unavailable. The key is not at fault: retry with backoff and do not rotate it.' },
  entitlement_unavailable: { status: 503, retryable: true, message: 'Plan and allowance state is temporarily unavailable. Retry with backoff.' },
  upstream_timeout: { status: 504, retryable: true, message: 'The company data store did not answer in time. Retry later.' },
} as const satisfies Record<string, { status: number; retryable: boolean; message: string }>;

export type ErrorCode = keyof typeof errorCatalogue;
export const errorCodes = Object.keys(errorCatalogue) as [ErrorCode, ...ErrorCode[]];

export function statusOf(code: ErrorCode): number {
  return errorCatalogue[code].status;
}
