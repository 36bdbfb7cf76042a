export { Notifier, type DeliveryReport, type NotifierOptions } from './notifier.js';
export { isNotifyEventName, notifyEventNames, type NotifyChange, type NotifyEvent, type NotifyEventName, type NotifySummary } from './notify-event.js';
export { resolveWebhooks, type ResolvedWebhook, type WebhookContext } from './resolve-webhooks.js';
export { jsonPayload, maxPayloadChanges, renderPayload, type JsonPayload, type PayloadContext } from './webhook-payload.js';
export { signatureHeader } from './sign-body.js';
export { decideDelivery, type DeliveryDecision, type DeliveryPolicyOptions } from './delivery-policy.js';
export { createWebhookTransport, type WebhookOutcome, type WebhookRequest, type WebhookTransport } from './webhook-transport.js';
