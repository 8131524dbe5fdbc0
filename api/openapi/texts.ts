import type { Language } from '../../core/companies/endpoint-catalogue.js';
import type { ErrorCode } from '../../core/errors/index.js';
import type { Measure } from '../../core/access/index.js';
import type { Meta, Usage } from '../../core/companies/endpoint-catalogue.js';
import type { ErrorObject } from '../../core/errors/index.js';

// Everything the OpenAPI document and the /docs page say that is not per endpoint, in both
// languages. Endpoint texts live in core/companies/endpoint-catalogue.ts.

export interface DocumentTexts {
  title: string;
  description: string;
  securityDescription: string;
  successDescription: string;
  /** The description of an envelope's `meta.endpoint`, pinned to the endpoint's slug. */
  endpointConst(slug: string): string;
  usageSentence(measure: Measure, forOrganization: boolean): string;
  errorCodes: Record<ErrorCode, string>;
  statusDescriptions: Record<number, string>;
  headers: { requestId: string; limit: string; remaining: string; reset: string; retryAfter: string; wwwAuthenticate: string };
  /** The /docs page's; `guideMarkdown` is the getting-started page's link to its Markdown text. */
  docsPage: { heading: string; intro: string; switchLabel: string; guideLink: string; guideMarkdown: string };
  /**
   * The one tag every operation carries (/docs groups operations under it, not under "default").
   * Its name is the same in both languages (build-document.ts), since generated clients name
   * classes and folders by it; this is what readers see: `x-displayName` is the heading
   * renderers show in its place (Redoc, and /docs: api/docs/docs-page.ts).
   */
  tag: { displayName: string; description: string };
  /** Summaries of the profile's named examples, one per branch. */
  profileExamples: { smallCompany: string; largeCompany: string };
  /** The components generated from schemas defined outside core/companies/schemas (the resource
   * schemas describe themselves, see italian-descriptions.ts): every endpoint's `…Envelope`,
   * `Meta`, `Usage`, `Error` and `ErrorEnvelope`. */
  envelopeSchemas: {
    Envelope: ComponentTexts<'data' | 'meta'>;
    Meta: ComponentTexts<keyof Meta>;
    Usage: ComponentTexts<keyof Usage>;
    Error: ComponentTexts<keyof ErrorObject | 'details.item' | 'details.path' | 'details.message'>;
    ErrorEnvelope: ComponentTexts<'error'>;
  };
}

/** A component's description and one per property; `a.b` is property b of a's object or items. */
export interface ComponentTexts<Property extends string> {
  description: string;
  properties: Record<Property, string>;
}

const unitName = {
  en: { credits: ['credit', 'credits'], calls: ['call', 'calls'] },
  it: { credits: ['credito', 'crediti'], calls: ['chiamata', 'chiamate'] },
} as const;

const measureText = (language: Language, m: Measure) => `${m.quantity} ${unitName[language][m.unit][m.quantity === 1 ? 0 : 1]}`;

export const documentTexts: Record<Language, DocumentTexts> = {
  en: {
    title: 'Italian company data API',
    description:
      'Read-only JSON API with Italian company data: identity, registry, risk flags, headcount, state aids, ownership, officers, branches and annual figures. ' +
      'Every endpoint is a GET with no body. Successes are `{ data, meta }`; failures are `{ error }` with a stable `error.code`, a message and the `requestId` (also in the `X-Request-Id` header). ' +
      'Each successful call records the usage measure returned in `meta.usage`; 4xx and 5xx answers are never charged. ' +
      'Send the organization API key as `Authorization: Bearer sk_...`; never put a key in a URL.\n\n' +
      'Compatibility: we may add fields to answers, and new optional things (such as endpoints, optional parameters or response headers); ignore the fields you do not know, and do not validate answers as closed objects. ' +
      'Renaming or removing a field, or changing its type or meaning, would come as a new versioned path, announced in advance.',
    securityDescription: 'Organization API key (`sk_live_...` or `sk_test_...`) sent as a bearer token.',
    successDescription: 'The company was found. `meta.usage` is the measure recorded for this call.',
    endpointConst: (slug) => `Slug of the endpoint that served the request: always \`${slug}\` for this one.`,
    // The unit may itself be a call: "billed as 1 call", not "1 call per successful call".
    usageSentence: (m, forOrganization) =>
      forOrganization
        ? `Each successful call is billed to your organization as ${measureText('en', m)}.`
        : `By default each successful call is billed as ${measureText('en', m)} (your plan may set another measure; \`meta.usage\` is authoritative).`,
    errorCodes: {
      missing_api_key: 'No `Authorization` header, or it is not a bearer token.',
      invalid_api_key: 'The key is unknown, revoked, expired, or not an organization key.',
      credits_exhausted: "The organization's credit balance cannot cover this credits-priced call.",
      limit_reached: "The organization reached its call cap for the billing period, or this call would pass it; `Retry-After` says when it resets.",
      client_not_configured: 'The organization exists but has no plan yet.',
      not_entitled: "The endpoint is not in the organization's plan.",
      unknown_endpoint: 'No endpoint matches the method and path.',
      not_found: 'No company matches the identifier. Not charged.',
      invalid_params: 'A path parameter fails validation; `details` lists each failure with its `path`.',
      rate_limited: 'Rate limit exceeded; retry after `Retry-After` seconds.',
      internal_error: 'An unexpected failure; quote the `requestId` to support.',
      upstream_error: 'The company data store failed.',
      auth_unavailable: 'Key validation is temporarily unavailable. The key is not at fault: retry after `Retry-After` seconds, with backoff; do not rotate it.',
      entitlement_unavailable: 'Plan and allowance state could not be read; retry after `Retry-After` seconds, with backoff.',
      upstream_timeout: 'The company data store did not answer within its deadline.',
    },
    statusDescriptions: {
      401: 'Authentication failed.', 402: 'Payment required.', 403: 'Forbidden.', 404: 'Not found.', 422: 'Invalid parameters.',
      429: 'Too many requests.', 500: 'Internal error.', 502: 'Upstream error.', 503: 'Temporarily unavailable.', 504: 'Upstream timeout.',
    },
    headers: {
      requestId: 'The request id (`req_` + UUID), equal to `meta.requestId` or `error.requestId`.',
      limit: "Requests allowed in the organization's current rate-limit window. Sent with `RateLimit-Remaining` and `RateLimit-Reset` on every answer to a request whose key was accepted; not with `unknown_endpoint` (answered before the key is read) or `auth_unavailable` (the key could not be checked).",
      remaining: 'Requests left in the current window.',
      reset: 'Seconds until the current window resets.',
      retryAfter: 'Whole seconds to wait before retrying.',
      wwwAuthenticate: 'The scheme to authenticate with: `Bearer realm="api"`, followed by `error="invalid_token"` when a key was sent and refused (`invalid_api_key`).',
    },
    tag: { displayName: 'Companies', description: 'Data on one Italian company, by fiscal code or tax ID.' },
    docsPage: { heading: 'API reference', intro: 'All endpoints of the service. Your own key\'s description, limited to your plan, is at GET /openapi.json.', switchLabel: 'Language', guideLink: 'New here? The getting-started guide: a key, a first call, which identifier goes where, errors.', guideMarkdown: 'This guide as Markdown' },
    // Example summaries are plain text (OpenAPI): Swagger UI shows Markdown's backticks as typed.
    profileExamples: {
      smallCompany: 'A micro, small or medium company, with risk',
      largeCompany: 'A large company, with peerCount and peers',
    },
    envelopeSchemas: {
      Envelope: {
        description: 'Body of a successful response: the data and the metadata of the call.',
        properties: { data: 'The company data this endpoint returns.', meta: 'Request id, endpoint and usage of the call.' },
      },
      Meta: {
        description: 'Metadata of a successful response.',
        properties: {
          requestId: 'Unique id of the request: `req_` followed by a UUID; also sent in the `X-Request-Id` header.',
          endpoint: 'Slug of the endpoint that served the request, e.g. `company-report`.',
          usage: 'Usage measure recorded for this call: what it is billed.',
        },
      },
      Usage: {
        description: 'A usage measure.',
        properties: { quantity: 'Quantity recorded, in the unit given.', unit: 'Unit of the measure: `credits` or `calls`.' },
      },
      Error: {
        description: 'The error: a stable code, a message and the request id.',
        properties: {
          code: 'Stable, machine-readable error code.',
          message: 'Human-readable explanation.',
          requestId: 'Id of the request (`req_` + UUID), as in the `X-Request-Id` header.',
          details: 'Only for `invalid_params`: one item per parameter that failed validation.',
          'details.item': 'One parameter that failed validation.',
          'details.path': 'Where the invalid value is, e.g. `path.fiscalCode`.',
          'details.message': 'What is wrong with it.',
        },
      },
      ErrorEnvelope: { description: 'Body of every error response.', properties: { error: 'The error.' } },
    },
  },
  it: {
    title: 'API dati delle imprese italiane',
    description:
      'API JSON in sola lettura con i dati delle imprese italiane: anagrafica, dati camerali, indicatori di rischio, dipendenti, aiuti di Stato, assetto proprietario, esponenti, sedi secondarie e dati annuali. ' +
      'Ogni endpoint è una GET senza corpo. Le risposte riuscite sono `{ data, meta }`; gli errori sono `{ error }` con un `error.code` stabile, un messaggio e il `requestId` (anche nell\'header `X-Request-Id`). ' +
      'Ogni chiamata riuscita registra la misura di consumo restituita in `meta.usage`; le risposte 4xx e 5xx non sono mai addebitate. ' +
      'Invia la chiave API dell\'organizzazione come `Authorization: Bearer sk_...`; non inserire mai una chiave in un URL.\n\n' +
      'Compatibilità: possiamo aggiungere campi alle risposte, e novità facoltative (come endpoint, parametri facoltativi o header di risposta); ignora i campi che non conosci e non validare le risposte come oggetti chiusi. ' +
      'Rinominare o togliere un campo, o cambiarne il tipo o il significato, avverrebbe con un nuovo percorso con versione, annunciato in anticipo.',
    securityDescription: 'Chiave API dell\'organizzazione (`sk_live_...` o `sk_test_...`) inviata come bearer token.',
    successDescription: 'L\'impresa è stata trovata. `meta.usage` è la misura registrata per questa chiamata.',
    endpointConst: (slug) => `Slug dell'endpoint che ha servito la richiesta: per questo è sempre \`${slug}\`.`,
    usageSentence: (m, forOrganization) =>
      forOrganization
        ? `Ogni chiamata riuscita viene addebitata alla tua organizzazione come ${measureText('it', m)}.`
        : `Di norma ogni chiamata riuscita viene addebitata come ${measureText('it', m)} (il tuo piano può prevedere un'altra misura; fa fede \`meta.usage\`).`,
    errorCodes: {
      missing_api_key: 'Manca l\'header `Authorization`, oppure non è un bearer token.',
      invalid_api_key: 'La chiave è sconosciuta, revocata, scaduta o non è una chiave di organizzazione.',
      credits_exhausted: 'Il saldo crediti dell\'organizzazione non copre questa chiamata, pagata in crediti.',
      limit_reached: 'L\'organizzazione ha raggiunto il suo tetto di chiamate per il periodo di fatturazione, o questa chiamata lo supererebbe; `Retry-After` indica quando si azzera.',
      client_not_configured: 'L\'organizzazione esiste ma non ha ancora un piano.',
      not_entitled: 'L\'endpoint non è incluso nel piano dell\'organizzazione.',
      unknown_endpoint: 'Nessun endpoint corrisponde al metodo e al percorso.',
      not_found: 'Nessuna impresa corrisponde all\'identificativo. Non addebitato.',
      invalid_params: 'Un parametro del percorso non è valido; `details` elenca ogni errore con il suo `path`.',
      rate_limited: 'Limite di frequenza superato; riprova dopo `Retry-After` secondi.',
      internal_error: 'Un errore imprevisto; comunica il `requestId` all\'assistenza.',
      upstream_error: 'L\'archivio dei dati delle imprese ha restituito un errore.',
      auth_unavailable: 'La verifica delle chiavi è temporaneamente non disponibile. La chiave non è in errore: riprova dopo `Retry-After` secondi, con backoff; non sostituirla.',
      entitlement_unavailable: 'Non è stato possibile leggere lo stato del piano e dei consumi; riprova dopo `Retry-After` secondi, con backoff.',
      upstream_timeout: 'L\'archivio dei dati delle imprese non ha risposto entro il tempo massimo.',
    },
    statusDescriptions: {
      401: 'Autenticazione non riuscita.', 402: 'Pagamento richiesto.', 403: 'Accesso negato.', 404: 'Non trovato.', 422: 'Parametri non validi.',
      429: 'Troppe richieste.', 500: 'Errore interno.', 502: 'Errore dell\'archivio dati.', 503: 'Temporaneamente non disponibile.', 504: 'Tempo scaduto dell\'archivio dati.',
    },
    headers: {
      requestId: 'L\'identificativo della richiesta (`req_` + UUID), uguale a `meta.requestId` o `error.requestId`.',
      limit: 'Richieste consentite nella finestra di frequenza corrente dell\'organizzazione. Inviato con `RateLimit-Remaining` e `RateLimit-Reset` in ogni risposta a una richiesta la cui chiave è stata accettata; non con `unknown_endpoint` (risposta data prima di leggere la chiave) né con `auth_unavailable` (la chiave non si è potuta verificare).',
      remaining: 'Richieste ancora disponibili nella finestra corrente.',
      reset: 'Secondi al termine della finestra corrente.',
      retryAfter: 'Secondi interi da attendere prima di riprovare.',
      wwwAuthenticate: 'Lo schema di autenticazione da usare: `Bearer realm="api"`, seguito da `error="invalid_token"` se una chiave è stata inviata e rifiutata (`invalid_api_key`).',
    },
    tag: { displayName: 'Imprese', description: 'Dati su una singola impresa italiana, per codice fiscale o partita IVA.' },
    docsPage: { heading: 'Documentazione API', intro: 'Tutti gli endpoint del servizio. La descrizione della tua chiave, limitata al tuo piano, è in GET /openapi.json.', switchLabel: 'Lingua', guideLink: 'Prima volta? La guida introduttiva: una chiave, la prima chiamata, quale codice usare dove, gli errori.', guideMarkdown: 'Questa guida in Markdown' },
    profileExamples: {
      smallCompany: 'Una micro, piccola o media impresa, con risk',
      largeCompany: 'Una grande impresa, con peerCount e peers',
    },
    envelopeSchemas: {
      Envelope: {
        description: 'Corpo di una risposta riuscita: i dati e i metadati della chiamata.',
        properties: { data: 'I dati dell\'impresa restituiti da questo endpoint.', meta: 'Identificativo della richiesta, endpoint e consumo della chiamata.' },
      },
      Meta: {
        description: 'Metadati di una risposta riuscita.',
        properties: {
          requestId: 'Identificativo univoco della richiesta: `req_` seguito da un UUID; inviato anche nell\'header `X-Request-Id`.',
          endpoint: 'Slug dell\'endpoint che ha servito la richiesta, ad esempio `company-report`.',
          usage: 'Misura di consumo registrata per questa chiamata: quanto le viene addebitato.',
        },
      },
      Usage: {
        description: 'Una misura di consumo.',
        properties: { quantity: 'Quantità registrata, nell\'unità indicata.', unit: 'Unità della misura: `credits` (crediti) o `calls` (chiamate).' },
      },
      Error: {
        description: 'L\'errore: un codice stabile, un messaggio e l\'identificativo della richiesta.',
        properties: {
          code: 'Codice di errore stabile, leggibile da una macchina.',
          message: 'Spiegazione leggibile da una persona.',
          requestId: 'Identificativo della richiesta (`req_` + UUID), come nell\'header `X-Request-Id`.',
          details: 'Solo per `invalid_params`: un elemento per ogni parametro non valido.',
          'details.item': 'Un parametro non valido.',
          'details.path': 'Dove si trova il valore non valido, ad esempio `path.fiscalCode`.',
          'details.message': 'Che cosa non va nel valore.',
        },
      },
      ErrorEnvelope: { description: 'Corpo di ogni risposta di errore.', properties: { error: 'L\'errore.' } },
    },
  },
};

