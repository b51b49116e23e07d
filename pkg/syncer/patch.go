package syncer

import (
	"encoding/json"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
	"github.com/kyma-project/kim-snatch/pkg/patch"
)

// caBundlePatch returns the JSON patch that sets bundle in every webhook
// entry that does not hold it yet, and the state annotation when it differs,
// preconditioned on the resourceVersion mwc was read at (docs/architecture.md,
// "Decision: a JSON patch, not server-side apply"). It names nothing else, so
// it never resets a field of whoever applies the manifests.
func caBundlePatch(mwc *admissionregistrationv1.MutatingWebhookConfiguration, bundle []byte, annotation string) []byte {
	ops := []patch.Operation{{Op: "replace", Path: "/metadata/resourceVersion", Value: mwc.ResourceVersion}}
	for i, wh := range mwc.Webhooks {
		if !cabundle.Equal(wh.ClientConfig.CABundle, bundle) {
			// "add" sets a member of an object whether it exists or not.
			ops = append(ops, patch.Operation{Op: "add", Path: "/webhooks/" + strconv.Itoa(i) + "/clientConfig/caBundle", Value: bundle})
		}
	}
	if mwc.Annotations[StateAnnotation] != annotation {
		if mwc.Annotations == nil {
			ops = append(ops, patch.Operation{Op: "add", Path: "/metadata/annotations", Value: map[string]string{StateAnnotation: annotation}})
		} else {
			ops = append(ops, patch.Operation{Op: "add", Path: "/metadata/annotations/" + escapePointer(StateAnnotation), Value: annotation})
		}
	}
	// Strings, bytes and a map of strings cannot fail to marshal.
	b, _ := json.Marshal(ops)
	return b
}

// escapePointer escapes a key for a JSON pointer (RFC 6901).
func escapePointer(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}
