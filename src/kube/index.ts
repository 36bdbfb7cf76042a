export { loadKubeConfig, type KubeClientModule, type KubeServer } from './kube-config.js';
export { KubeSecretError, KubeSecretSink, defaultSecretWriteAttempts, reachProblem, type KubeSecretSinkOptions } from './kube-secret-sink.js';
export { KubeCallError, kubeSecretApi, type SecretApi, type SecretVerb } from './secret-api.js';
export { dataKeyProblem, maxSecretKeyLength, passwordDataKey, passwordKeyPrefix, SecretKeyTooLongError, secretDataKey, secretDataKeyName } from './secret-data-key.js';
export { defaultValueWriteAttempts, KubeSecretValue, KubeValueMissingError } from './kube-secret-value.js';
