// The spec's five tools that act for a person. This server takes organization API keys only
// and offers no sign-in (no OAuth: no /.well-known metadata, no /authorize), and a key
// identifies an organization, not a person: so they are absent from tools/list, and calling
// one returns a not_entitled tool error that says why, without promising a sign-in.
export const personOnlyToolNames: ReadonlySet<string> = new Set([
  'service_list_official_documents',
  'service_request_official_document',
  'service_get_person_contacts',
  'service_request_person_contacts',
  'service_get_usage',
]);

export const personOnlyToolMessage = (name: string): string =>
  `${name} needs a signed-in user: it acts for a person. This tool server accepts organization API keys only, ` +
  'and a key identifies the organization, not a person, so this tool cannot be called here.';
