export {
  alertSettings, setWebhookUrl, PRIVATE_WEBHOOK_TARGET, rotateWebhookSecret, addThreshold, removeThreshold, listThresholds, thresholdKinds, thresholdInputSchema, THRESHOLD_ALREADY_SET, webhookUrlSchema,
  type AlertSettings, type AlertThreshold, type ThresholdKind,
} from './alert-settings.js';
export { evaluateThresholds, firedThresholds, THRESHOLD_EVENT, type ThresholdPayload, type EvaluationOutcome } from './evaluate-thresholds.js';
export { deliverDueWebhooks, deliveriesPage, listDeliveries, backoffMs, defaultDeliveryOptions, type DeliveryOptions, type DeliveryRunOutcome, type WebhookDeliveryRow } from './deliver-webhooks.js';
export { signWebhookBody, verifyWebhookSignature, SIGNATURE_HEADER, TIMESTAMP_HEADER, DELIVERY_ID_HEADER } from './webhook-signature.js';
export { startAlertRunner, type AlertRunner } from './alert-runner.js';
