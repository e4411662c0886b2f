import type { FormLanguage } from '../workspaces/form-settings.ts';

// Every word the hosted form shows, in each of its languages: one place to add a language or fix
// a wording. The API's validation messages are English; `apiMessages` translates the known ones
// (an unknown one is shown as the API wrote it).

export interface FormStrings {
  name: string;
  phone: string;
  phoneHint: string;
  email: string;
  optional: string;
  goal: string;
  choose: string;
  submit: string;
  defaultConsent: (workspaceName: string) => string;
  required: string;
  emailRequired: string;
  chooseOption: string;
  numberNeeded: string;
  numberRange: (min: number, max: number | null) => string;
  consentRequired: string;
  errorSummary: string;
  tooFast: string;
  expired: string;
  turnstileFailed: string;
  honeypotLabel: string;
  thanksTitle: string;
  thanksDefault: string;
  callingNow: string;
  callingNowFrom: (number: string) => string;
  whatsappNext: string;
  whatsappOpen: string;
  selfBooking: string;
  selfBookingLink: string;
  duplicateTitle: string;
  duplicateBody: string;
  limitTitle: string;
  limitBody: string;
  failedTitle: string;
  failedBody: string;
  notFoundTitle: string;
  notFoundBody: string;
  sandboxNote: string;
  apiMessages: Record<string, string>;
}

const en: FormStrings = {
  name: 'Your name',
  phone: 'Phone number',
  phoneHint: 'With country code, for example +44 20 7946 0958',
  email: 'E-mail',
  optional: '(optional)',
  goal: 'What can we help you with?',
  choose: 'Please choose',
  submit: 'Send',
  defaultConsent: (w) => `I agree that ${w} may contact me by phone, WhatsApp or e-mail about my request.`,
  required: 'This field is required.',
  emailRequired: 'Please enter your e-mail address.',
  chooseOption: 'Please choose one of the options.',
  numberNeeded: 'Please enter a number.',
  numberRange: (min, max) =>
    max === null ? `Please enter a number of at least ${min}.` : `Please enter a number from ${min} to ${max}.`,
  consentRequired: 'Please agree to be contacted, so that we can answer you.',
  errorSummary: 'Please check the fields marked below.',
  tooFast: 'That was very quick. Please check your details and send the form again.',
  expired: 'This page was open for a long time. Please check your details and send the form again.',
  turnstileFailed: 'We could not confirm that you are not a robot. Please try again.',
  honeypotLabel: 'Leave this field empty',
  thanksTitle: 'Thank you!',
  thanksDefault: 'We have received your details.',
  callingNow: "We're calling you now.",
  callingNowFrom: (n) => `We're calling you now from ${n}.`,
  whatsappNext: 'We will send you a WhatsApp message in a moment.',
  whatsappOpen: 'Open the chat on WhatsApp',
  selfBooking: 'Prefer to pick a time yourself?',
  selfBookingLink: 'Book an appointment',
  duplicateTitle: 'We already have your details',
  duplicateBody: "We already have your details, we'll be in touch.",
  limitTitle: 'Please try again later',
  limitBody: 'We have received many requests in the last hour. Please try again in a little while.',
  failedTitle: 'Something went wrong',
  failedBody: 'We could not take your request just now. Please try again in a few minutes.',
  notFoundTitle: 'Form not found',
  notFoundBody: 'There is no form at this address.',
  sandboxNote: 'Test mode: nobody will really call or message you.',
  // English shows the API's own messages, word for word.
  apiMessages: {},
};

const de: FormStrings = {
  name: 'Ihr Name',
  phone: 'Telefonnummer',
  phoneHint: 'Mit Ländervorwahl, zum Beispiel +49 30 1234567',
  email: 'E-Mail',
  optional: '(optional)',
  goal: 'Wobei können wir Ihnen helfen?',
  choose: 'Bitte wählen',
  submit: 'Absenden',
  defaultConsent: (w) =>
    `Ich bin einverstanden, dass ${w} mich zu meiner Anfrage per Telefon, WhatsApp oder E-Mail kontaktiert.`,
  required: 'Dieses Feld ist erforderlich.',
  emailRequired: 'Bitte geben Sie Ihre E-Mail-Adresse ein.',
  chooseOption: 'Bitte wählen Sie eine der Möglichkeiten.',
  numberNeeded: 'Bitte geben Sie eine Zahl ein.',
  numberRange: (min, max) =>
    max === null ? `Bitte geben Sie eine Zahl ab ${min} ein.` : `Bitte geben Sie eine Zahl von ${min} bis ${max} ein.`,
  consentRequired: 'Bitte stimmen Sie der Kontaktaufnahme zu, damit wir Ihnen antworten können.',
  errorSummary: 'Bitte prüfen Sie die markierten Felder.',
  tooFast: 'Das ging sehr schnell. Bitte prüfen Sie Ihre Angaben und senden Sie das Formular erneut.',
  expired: 'Diese Seite war lange geöffnet. Bitte prüfen Sie Ihre Angaben und senden Sie das Formular erneut.',
  turnstileFailed: 'Wir konnten nicht bestätigen, dass Sie kein Roboter sind. Bitte versuchen Sie es erneut.',
  honeypotLabel: 'Dieses Feld bitte leer lassen',
  thanksTitle: 'Vielen Dank!',
  thanksDefault: 'Wir haben Ihre Angaben erhalten.',
  callingNow: 'Wir rufen Sie jetzt an.',
  callingNowFrom: (n) => `Wir rufen Sie jetzt von ${n} aus an.`,
  whatsappNext: 'Wir schreiben Ihnen gleich eine WhatsApp-Nachricht.',
  whatsappOpen: 'Chat in WhatsApp öffnen',
  selfBooking: 'Sie möchten lieber selbst einen Termin wählen?',
  selfBookingLink: 'Termin buchen',
  duplicateTitle: 'Wir haben Ihre Angaben bereits',
  duplicateBody: 'Wir haben Ihre Angaben bereits und melden uns bei Ihnen.',
  limitTitle: 'Bitte versuchen Sie es später erneut',
  limitBody: 'Wir haben in der letzten Stunde sehr viele Anfragen erhalten. Bitte versuchen Sie es in Kürze erneut.',
  failedTitle: 'Etwas ist schiefgelaufen',
  failedBody: 'Wir konnten Ihre Anfrage gerade nicht annehmen. Bitte versuchen Sie es in ein paar Minuten erneut.',
  notFoundTitle: 'Formular nicht gefunden',
  notFoundBody: 'Unter dieser Adresse gibt es kein Formular.',
  sandboxNote: 'Testmodus: Niemand wird Sie wirklich anrufen oder anschreiben.',
  apiMessages: {
    'Phone must be a valid E.164-style number.':
      'Bitte geben Sie eine gültige Telefonnummer ein, zum Beispiel +49 30 1234567.',
    'Name must be 1 to 120 characters.': 'Der Name muss 1 bis 120 Zeichen lang sein.',
    'Email must be a valid e-mail address.': 'Bitte geben Sie eine gültige E-Mail-Adresse ein.',
    'Goal must be a string of at most 2000 characters.': 'Bitte schreiben Sie höchstens 2000 Zeichen.',
  },
};

export const FORM_STRINGS: Record<FormLanguage, FormStrings> = { en, de };

/** An API validation message in the form's language; one not translated is shown as the API wrote it. */
export function translatedApiMessage(strings: FormStrings, message: string): string {
  return strings.apiMessages[message] ?? message;
}
