// The spec's five tools that need a person (OAuth sign-in). A key identifies an organization,
// not a person, so on a key connection they are absent from tools/list and calling one
// returns a not_entitled tool error that says why.
export const personOnlyToolNames: ReadonlySet<string> = new Set([
  'service_list_official_documents',
  'service_request_official_document',
  'service_get_person_contacts',
  'service_request_person_contacts',
  'service_get_usage',
]);

export const personOnlyToolMessage = (name: string): string =>
  `${name} needs a signed-in user: it is offered only when a person signs in to the tool server (OAuth). ` +
  'An organization API key identifies the organization, not a person, so it cannot call this tool.';
