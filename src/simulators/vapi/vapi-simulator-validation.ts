// `POST /call` body validation of the Vapi simulator, shaped like class-validator + NestJS
// ValidationPipe(forbidNonWhitelisted), which is what Vapi runs. A rule returns messages for one
// property; nested objects prefix their children's messages with "<property>." exactly as NestJS
// flattens nested ValidationErrors (array items with "<property>.<index>.").

export type Json = Record<string, unknown>;
type Rule = (value: unknown, key: string, parent: Json) => string[];
type Shape = Record<string, Rule>;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const any: Rule = () => [];
const object: Rule = (v, k) => (isObject(v) ? [] : [`${k} must be an object`]);
const bool: Rule = (v, k) => (typeof v === 'boolean' ? [] : [`${k} must be a boolean value`]);
const array: Rule = (v, k) => (Array.isArray(v) ? [] : [`${k} must be an array`]);
const str =
  (max?: number, min?: number): Rule =>
  (v, k) => {
    if (typeof v !== 'string') return [`${k} must be a string`];
    const out: string[] = [];
    if (min !== undefined && v.length < min) out.push(`${k} must be longer than or equal to ${min} characters`);
    if (max !== undefined && v.length > max) out.push(`${k} must be shorter than or equal to ${max} characters`);
    return out;
  };
const oneOf =
  (values: readonly string[]): Rule =>
  (v, k) =>
    typeof v === 'string' && values.includes(v)
      ? []
      : [`${k} must be one of the following values: ${values.join(', ')}`];
const num =
  (min: number, max: number): Rule =>
  (v, k) => {
    if (typeof v !== 'number' || !Number.isFinite(v))
      return [`${k} must be a number conforming to the specified constraints`];
    if (v < min) return [`${k} must not be less than ${min}`];
    return v > max ? [`${k} must not be greater than ${max}`] : [];
  };
const nested =
  (shape: () => Shape): Rule =>
  (v, k) =>
    isObject(v)
      ? validate(v, shape()).map((m) => `${k}.${m}`)
      : [`nested property ${k} must be either object or array`];
const nestedArray =
  (shape: (item: Json) => Shape): Rule =>
  (v, k) => {
    if (!Array.isArray(v)) return [`${k} must be an array`];
    return v.flatMap((item, i) =>
      isObject(item)
        ? validate(item, shape(item)).map((m) => `${k}.${i}.${m}`)
        : [`nested property ${k} must be either object or array`],
    );
  };
/** A map whose values all have one shape (JSON Schema `properties`). */
const mapOf =
  (shape: () => Shape): Rule =>
  (v, k) =>
    isObject(v)
      ? Object.entries(v).flatMap(([name, item]) => nested(shape)(item, `${k}.${name}`, v))
      : [`${k} must be an object`];
const strings: Rule = (v, k) =>
  Array.isArray(v) && v.every((x) => typeof x === 'string') ? [] : [`each value in ${k} must be a string`];
/** Properties we accept but do not model deeply (Vapi validates them; our client never sends them). */
const loose = (names: string): Shape => Object.fromEntries(names.split(' ').map((n) => [n, any]));

// customer.number: 3–40 chars, E.164 unless numberE164CheckEnabled=false (then alphanumeric, Vapi's OpenAPI document).
// The E.164 message wording is UNCONFIRMED (recalled from community reports).
const customerNumber: Rule = (v, k, parent) => {
  const basic = str(40, 3)(v, k, parent);
  if (basic.length > 0 || typeof v !== 'string') return basic;
  const ok = parent.numberE164CheckEnabled === false ? /^\+?[a-zA-Z0-9]+$/.test(v) : /^\+[1-9]\d{1,14}$/.test(v);
  return ok
    ? []
    : [
        `${k} must be a valid phone number in the E.164 format. ` +
          'Hot tip, you may be missing the country code (Eg. US: +1).',
      ];
};

// Vapi's OpenAPI document `Server`.
const serverShape = (): Shape => ({
  ...loose('staticIpAddressesEnabled encryptedPaths backoffPlan'),
  timeoutSeconds: num(1, 300),
  credentialId: str(),
  url: str(),
  headers: object,
});

// Vapi's OpenAPI document `JsonSchema`: Vapi whitelists these keys only, so `minimum`, `default`,
// `additionalProperties` and the like are refused. Whether the whitelist also applies inside
// `properties` is UNCONFIRMED; the simulator assumes it does, which is the safe side for us.
const JSON_TYPES = ['string', 'number', 'integer', 'boolean', 'array', 'object'] as const;
const JSON_FORMATS = ['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid'] as const;
const jsonSchemaShape = (): Shape => ({
  type: oneOf(JSON_TYPES),
  items: nested(jsonSchemaShape),
  properties: mapOf(jsonSchemaShape),
  description: str(),
  pattern: str(),
  format: oneOf(JSON_FORMATS),
  required: strings,
  enum: strings,
  title: str(),
});
// Vapi's OpenAPI document `OpenAIFunctionParameters` (type and properties required) and `OpenAIFunction`.
const parametersShape = (): Shape => ({
  type: oneOf(['object']),
  properties: mapOf(jsonSchemaShape),
  required: strings,
});
const functionName: Rule = (v, k) =>
  typeof v === 'string' && /^[a-zA-Z0-9_-]{1,64}$/.test(v)
    ? []
    : [`${k} must match /^[a-zA-Z0-9_-]{1,64}$/ regular expression`];
const functionShape = (): Shape => ({
  name: functionName,
  strict: bool,
  description: str(),
  parameters: nested(parametersShape),
});
// `tools:append` items: function tools are checked (Vapi's OpenAPI document `CreateFunctionToolDTO`); other tool
// types are accepted as they are, since our client never sends them.
const toolShape = (item: Json): Shape =>
  item.type === 'function'
    ? {
        ...loose('messages variableExtractionPlan parameters rejectionPlan'),
        type: any,
        async: bool,
        server: nested(serverShape),
        function: nested(functionShape),
      }
    : Object.fromEntries(Object.keys(item).map((k) => [k, any]));

// Property names are those of Vapi's OpenAPI document AssistantOverrides / CreateCustomerDTO / CreateCallDTO.
const overridesShape = (): Shape => ({
  ...loose(
    'transcriber model voice firstMessageInterruptionsEnabled backgroundSound ' +
      'modelOutputInMessagesEnabled transportConfigurations observabilityPlan credentials hooks endCallPhrases ' +
      'compliancePlan backgroundSpeechDenoisingPlan analysisPlan artifactPlan startSpeakingPlan stopSpeakingPlan ' +
      'monitorPlan credentialIds keypadInputPlan firstMessageMode',
  ),
  'tools:append': nestedArray(toolShape),
  server: nested(serverShape),
  firstMessage: str(),
  clientMessages: array,
  serverMessages: array,
  maxDurationSeconds: num(10, 43200),
  variableValues: object, // free-form keys
  metadata: object, // free-form keys
  name: str(40),
  voicemailMessage: str(1000),
  voicemailDetection,
  endCallMessage: str(1000),
});
const customerShape = (): Shape => ({
  numberE164CheckEnabled: bool,
  extension: str(10),
  assistantOverrides: nested(overridesShape),
  squadOverrides: nested(overridesShape),
  number: customerNumber,
  sipUri: str(),
  name: str(40),
  email: str(40),
  externalId: str(40),
});
// Vapi's OpenAPI document `SchedulePlan` (earliestAt required, IsISO8601 in class-validator's words).
const isoDate: Rule = (v, k) =>
  typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(v)
    ? []
    : [`${k} must be a valid ISO 8601 date string`];
const schedulePlan: Rule = (v, k, parent) => {
  const nestedMessages = nested(() => ({ earliestAt: isoDate, latestAt: isoDate }))(v, k, parent);
  if (isObject(v) && v.earliestAt === undefined)
    nestedMessages.push(`${k}.earliestAt must be a valid ISO 8601 date string`);
  return nestedMessages;
};
// `voicemailDetection`: "off" or a plan of one of these providers (Vapi's OpenAPI document
// `*VoicemailDetectionPlan`); the plans' tuning fields are not modelled.
const voicemailDetection: Rule = (v, k) => {
  if (v === 'off') return [];
  if (!isObject(v)) return [`${k} must be an object`];
  return oneOf(['vapi', 'google', 'openai', 'twilio'])(v.provider, `${k}.provider`, v);
};

const createCallShape = (): Shape => ({
  ...loose('transport customers assistant squad workflow workflowOverrides phoneNumber'),
  schedulePlan,
  assistantVersion: str(),
  name: str(40),
  assistantId: str(),
  assistantOverrides: nested(overridesShape),
  squadId: str(),
  squadOverrides: nested(overridesShape),
  workflowId: str(),
  customerId: str(),
  customer: nested(customerShape),
  phoneNumberId: str(),
});

/** Whitelist errors first, then per-property checks: the order class-validator reports them. */
function validate(obj: Json, shape: Shape): string[] {
  const out = Object.keys(obj)
    .filter((k) => !Object.hasOwn(shape, k))
    .map((k) => `property ${k} should not exist`);
  for (const [key, rule] of Object.entries(shape)) {
    if (obj[key] !== undefined) out.push(...rule(obj[key], key, obj));
  }
  return out;
}

/** The messages Vapi would answer `POST /call` with in a 400; empty when the body is valid. */
export function validateCreateCall(body: Json): string[] {
  return validate(body, createCallShape());
}
