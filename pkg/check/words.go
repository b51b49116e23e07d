package check

import (
	"maps"
	"strings"
)

// The catalogue: every word check prints, by item ID and finding. The
// decisions (one file per item) return facts; found.result turns them into
// a Result with these phrases. docs/operations.md ("Checks") lists the
// items, and test/docs holds its table and the commands it names to this
// catalogue (Catalogue). The wording is part of the report's contract:
// tests and the end-to-end suite read it.

// The findings every item may report.
const (
	keyNotPermitted finding = "not-permitted" // accessFacts: the read was refused, SKIP
	keyReadFailure  finding = "read-failure"  // accessFacts: the read failed otherwise, FAIL
)

// blockedRemedy is the remediation of an item skipped for another's sake.
const blockedRemedy = "Fix the check named in the message first."

// commonPartials are the templates every item's phrases may call. No text
// stands between them, since it would be printed.
const commonPartials = `{{define "reinstall"}}apply the {{.}} release you installed again, server-side: ` +
	`kubectl apply --server-side -f install.yaml of the GitHub release {{.}}/<version> you run, ` +
	`or kubectl apply --server-side -k <your overlay> if one installed it (docs/operations.md, "Install"); ` +
	`add --force-conflicts to take back fields changed by hand{{end}}` +
	`{{define "permitted"}}Run check with a kubeconfig that may {{.}} to include this item ` +
	`(the syncer's ServiceAccount may not read everything, by design).{{end}}` +
	`{{define "readFix"}}Check the connection to the API server and the permissions of the user running the check ` +
	`(kubectl auth can-i get {{.}}).{{end}}` +
	`{{define "mwcAbsent"}}MutatingWebhookConfiguration {{.WebhookConfiguration}} ` +
	`{{if .MWCMissing}}not found{{else}}could not be read{{end}}{{end}}` +
	`{{define "from"}}{{if .PoolPod}}from Pod {{.PoolPod}}{{else}}the default{{end}}{{end}}` +
	`{{define "marker"}}ConfigMap {{.Namespace}}/{{.Name}}{{if .Reason}}, reason {{printf "%q" .Reason}}{{end}}` +
	`{{if .By}}, by {{printf "%q" .By}}{{end}}{{if not .Since.IsZero}}, since {{time .Since}}{{end}}{{end}}` +
	`{{define "unmark"}}kubectl -n {{.Namespace}} delete configmap {{.Name}}{{end}}`

func commonPhrases() map[finding]phrase {
	return map[finding]phrase{
		keyNotPermitted: {
			`these credentials may not {{.Op}}, so this was not checked: {{.Err}}`,
			`{{template "permitted" .Op}}`},
		keyReadFailure: {
			`could not read {{.What}}: {{.Err}}`,
			`{{template "readFix" .Resource}}`},
	}
}

// catalogue returns every item's words by ID.
func catalogue() map[string]itemWords {
	return map[string]itemWords{
		IDWebhookPods:          webhookPodsWords(),
		IDSyncerLease:          syncerLeaseWords(),
		IDCASecret:             caSecretWords(),
		IDWebhookConfiguration: webhookConfigurationWords(),
		IDCABundle:             caBundleWords(),
		IDNamespace:            namespaceWords(),
		IDWebhookEndpoints:     webhookEndpointsWords(),
		IDServedCertificate:    servedCertificateWords(),
		IDAdmission:            admissionWords(),
		IDKymaPool:             kymaPoolWords(),
		IDPlacement:            placementWords(),
	}
}

// Catalogue returns, by item ID, the templates of every remediation the
// item may print: its own, its partials, the common phrases and the
// common partials it calls. test/docs holds docs/operations.md ("Checks")
// to the item IDs and to the kubectl commands these name.
func Catalogue() map[string][]string {
	out := map[string][]string{}
	for id, words := range catalogue() {
		texts := []string{words.partials}
		for _, p := range words.phrases {
			texts = append(texts, p.remedy)
		}
		for _, p := range commonPhrases() {
			texts = append(texts, p.remedy)
		}
		for _, name := range []string{"reinstall", "permitted", "readFix", "unmark"} {
			if strings.Contains(strings.Join(texts, ""), `{{template "`+name+`"`) {
				_, def, _ := strings.Cut(commonPartials, `{{define "`+name+`"}}`)
				def, _, _ = strings.Cut(def, "{{end}}")
				texts = append(texts, def)
			}
		}
		if id == IDPlacement {
			texts = append(texts, restartCommand)
		}
		out[id] = texts
	}
	return out
}

// Keys of webhook-pods.
const (
	keyPodsNone      finding = "none"       // no Pod matches the selector
	keyPodsEnough    finding = "enough"     // at least the minimum ready
	keyPodsFew       finding = "few"        // some, but fewer than the minimum, ready
	keyPodsNoneReady finding = "none-ready" // not one ready
)

func webhookPodsWords() itemWords {
	const ready = `{{len .Ready}} of {{.Total}} webhook Pods ready in {{.Namespace}} (minimum {{.MinReadyWebhooks}})`
	return itemWords{facts: podsFacts{}, partials: `{{define "describe"}}kubectl -n {{.Namespace}} describe pods ` +
		`-l {{.WebhookSelector}}{{end}}`, phrases: map[finding]phrase{
		keyPodsNone: {
			`no Pods match {{.WebhookSelector}} in namespace {{.Namespace}}; ` +
				`Pods in Kyma namespaces are created without the affinity`,
			`Check the Deployment: kubectl -n {{.Namespace}} get deployment,replicaset -l {{.WebhookSelector}}; ` +
				`if it is gone, {{template "reinstall" "snatch-webhook"}}; or fix --webhook-selector.`},
		keyPodsEnough: {ready + `: {{names .Ready}}{{if .NotReady}}; not ready: {{names .NotReady}}{{end}}`, ""},
		keyPodsFew: {ready + `; not ready: {{names .NotReady}}`,
			`One more disruption leaves no replica to call; find out why the others are not ready: ` +
				`{{template "describe" .}}.`},
		keyPodsNoneReady: {
			ready + `; not ready: {{names .NotReady}}; Pods in Kyma namespaces are created without the affinity`,
			`Find out why no replica is ready (events, probes, the certificate Secret mount): ` +
				`{{template "describe" .}}.`},
	}}
}

// String names a Pod that cannot serve, and why.
func (p podState) String() string { return p.Name + " (" + p.Why + ")" }

// Keys of syncer-lease.
const (
	keyLeaseMissing     finding = "missing"       // the Lease does not exist
	keyLeaseNoHolder    finding = "no-holder"     // released, not taken
	keyLeaseNoTerm      finding = "no-term"       // no renewTime or duration
	keyLeaseExpired     finding = "expired"       // not renewed in its term
	keyLeaseElsewhere   finding = "elsewhere"     // the holder has no Pod here
	keyLeasePodDenied   finding = "pod-denied"    // the holder's Pod may not be read
	keyLeasePodFailed   finding = "pod-failed"    // the holder's Pod could not be read
	keyLeaseSARDenied   finding = "sar-denied"    // may not ask whether the holder may patch
	keyLeaseSARFailed   finding = "sar-failed"    // could not ask
	keyLeaseMayNotPatch finding = "may-not-patch" // the holder's ServiceAccount may not patch the MWC
	keyLeaseNotRunning  finding = "not-running"   // the holder's Pod does not run
	keyLeaseHealthy     finding = "healthy"
)

func syncerLeaseWords() itemWords {
	const partials = `{{define "lease"}}Lease {{.LeaderElectionNamespace}}/{{.LeaderElectionID}}{{end}}` +
		`{{define "pods"}}kubectl -n {{.Namespace}} get pods -l app.kubernetes.io/name=cabundle-syncer{{end}}` +
		`{{define "live"}}{{template "lease" .}} held by {{.Holder}}, renewed {{time .Renewed}}, ` +
		`valid until {{time .Expires}}{{end}}` +
		`{{define "may"}}{{template "live" .}}; its ServiceAccount {{.User}} may patch ` +
		`MutatingWebhookConfiguration {{.WebhookConfiguration}}{{end}}`
	phrases := leaseTermPhrases()
	maps.Copy(phrases, leaseHolderPhrases())
	return itemWords{facts: leaseFacts{}, partials: partials, phrases: phrases}
}

// leaseTermPhrases word what the Lease itself shows.
func leaseTermPhrases() map[finding]phrase {
	return map[finding]phrase{
		keyLeaseMissing: {
			`{{template "lease" .}} not found: it ships with cabundle-syncer and the syncer may not create it, ` +
				`so no replica can lead and nothing keeps the caBundle in step with the CA`,
			`Re-create it: {{template "reinstall" "cabundle-syncer"}}, which ships the Lease; ` +
				`or fix --leader-election-namespace/--leader-election-id. Then check {{template "pods" .}}.`},
		keyLeaseNoHolder: {
			`{{template "lease" .}} has no holder: the last leader released it and no replica took it; ` +
				`nothing keeps the caBundle in step with the CA`,
			`Check that the syncer Deployment has running replicas and read their logs: {{template "pods" .}}.`},
		keyLeaseNoTerm: {
			`{{template "lease" .}} held by {{.Holder}} has no renewTime or leaseDurationSeconds, ` +
				`so its term cannot be told`,
			`Clear its holder so that a syncer replica takes it (kubectl -n {{.LeaderElectionNamespace}} patch lease ` +
				`{{.LeaderElectionID}} --type=merge -p '{"spec":{"holderIdentity":null}}') ` +
				`and check {{template "pods" .}}.`},
		keyLeaseExpired: {
			`{{template "lease" .}} held by {{.Holder}} expired at {{time .Expires}} (renewed {{time .Renewed}}, ` +
				`duration {{.Duration}}s): the leader stopped renewing and no replica took over`,
			`Check that the syncer replicas run and can reach the API server, and read their logs: ` +
				`{{template "pods" .}}.`},
	}
}

// leaseHolderPhrases word what the holder's Pod and its rights show.
func leaseHolderPhrases() map[finding]phrase {
	return map[finding]phrase{
		keyLeaseElsewhere: {
			`{{template "live" .}}, but Pod {{.Namespace}}/{{.Pod}} does not exist; the leader runs elsewhere`,
			`Find the process that holds the Lease as {{.Holder}}; a syncer in this cluster sets POD_NAME ` +
				`(its Deployment does) and runs in --namespace {{.Namespace}}.`},
		keyLeasePodDenied: {
			`{{template "live" .}}; its Pod {{.Namespace}}/{{.Pod}} was not looked at: ` +
				`these credentials may not get Pods: {{.Err}}`,
			`{{template "permitted" (print "get Pods in " .Namespace)}}`},
		keyLeasePodFailed: {
			`could not read Pod {{.Namespace}}/{{.Pod}}, the holder of {{template "lease" .}}: {{.Err}}`,
			`{{template "readFix" "pods"}}`},
		keyLeaseSARDenied: {
			`{{template "live" .}}; whether its ServiceAccount may patch the MWC was not asked: ` +
				`these credentials may not create SubjectAccessReviews: {{.Err}}`,
			`{{template "permitted" "create SubjectAccessReviews"}}`},
		keyLeaseSARFailed: {
			`{{template "live" .}}; could not ask the API server may {{.User}} patch ` +
				`MutatingWebhookConfiguration {{.WebhookConfiguration}}: {{.Err}}`,
			`Check the connection to the API server and rerun check.`},
		keyLeaseMayNotPatch: {
			`{{template "live" .}}, but its ServiceAccount {{.User}} may not patch MutatingWebhookConfiguration ` +
				`{{.WebhookConfiguration}} ({{or .Reason "no rule allows it"}}): the next CA rotation never reaches ` +
				`the caBundle, and the API server then stops trusting the webhook`,
			`Restore the syncer's RBAC, the ClusterRole and ClusterRoleBinding cabundle-syncer: ` +
				`{{template "reinstall" "cabundle-syncer"}}; kubectl auth can-i patch ` +
				`mutatingwebhookconfigurations/{{.WebhookConfiguration}} --as={{.User}} then answers yes.`},
		keyLeaseNotRunning: {
			`{{template "may" .}}, but its Pod {{.Namespace}}/{{.Pod}} is {{.Phase}}` +
				`{{if .Terminating}}, terminating{{end}}`,
			`A standby takes over once the Lease expires; if none does, check the syncer replicas: ` +
				`kubectl -n {{.Namespace}} describe pod {{.Pod}}.`},
		keyLeaseHealthy: {`{{template "may" .}}; Pod {{.Namespace}}/{{.Pod}} is Running`, ""},
	}
}

// Keys of ca-secret.
const (
	keyCAMissing  finding = "missing"  // the Secret does not exist
	keyCANoKey    finding = "no-key"   // it lacks --ca-key
	keyCAInvalid  finding = "invalid"  // the syncer would not copy it
	keyCAExpiring finding = "expiring" // valid for less than --min-ca-validity
	keyCAValid    finding = "valid"
)

func caSecretWords() itemWords {
	const partials = `{{define "secret"}}Secret {{.SecretNamespace}}/{{.SecretName}}{{end}}` +
		`{{define "certificates"}}kubectl -n {{.SecretNamespace}} get certificates.cert.gardener.cloud{{end}}` +
		`{{define "ca"}}{{template "secret" .}} key {{.CAKey}}: CA {{printf "%q" .CommonName}} ` +
		`(sha256 {{.Fingerprint}}){{if .Older}} (and {{.Older}} older CA(s)){{end}}{{end}}`
	return itemWords{facts: caFacts{}, partials: partials, phrases: map[finding]phrase{
		keyCAMissing: {
			`{{template "secret" .}} not found; the webhook has no certificate and the syncer no CA`,
			`Check the Certificate that writes it (deploy/webhook/certificate.yaml) and cert-management: ` +
				`{{template "certificates" .}}; or fix --secret-namespace/--secret-name.`},
		keyCANoKey: {
			`{{template "secret" .}} has no key {{.CAKey}} (keys: {{join .Keys ", "}})`,
			`Check that the Certificate is a CA (isCA: true) so that its issuer writes {{.CAKey}}: ` +
				`{{template "certificates" .}}; or fix --ca-key.`},
		keyCAInvalid: {
			`{{template "secret" .}} key {{.CAKey}} is {{.Reason}}: {{.Detail}}`,
			`The syncer keeps the last good caBundle until this is fixed; have cert-management reissue the ` +
				`certificate: {{template "certificates" .}}.`},
		keyCAExpiring: {
			`{{template "ca" .}} expires at {{time .NotAfter}}, in {{duration .Left}}, ` +
				`less than --min-ca-validity {{.MinCAValidity}}`,
			`The issuer should have renewed it by now; check the Certificate's status and cert-management's logs: ` +
				`{{template "certificates" .}}.`},
		keyCAValid: {`{{template "ca" .}} valid until {{time .NotAfter}} ({{duration .Left}} left)`, ""},
	}}
}

// Keys of webhook-configuration.
const (
	keyConfigMissing    finding = "missing"     // the MWC does not exist
	keyConfigDisabled   finding = "disabled"    // the emergency disable deleted it
	keyConfigEmpty      finding = "no-entries"  // it has no entries
	keyConfigWrong      finding = "wrong"       // entries that do not send Kyma Pods
	keyConfigMarkerLeft finding = "marker-left" // right, and the emergency-disable marker is still there
	keyConfigRight      finding = "right"
)

func webhookConfigurationWords() itemWords {
	const partials = `{{define "what"}}MutatingWebhookConfiguration {{.WebhookConfiguration}}{{end}}` +
		`{{define "apply"}}The syncer never creates or edits anything but the caBundle: ` +
		`{{template "reinstall" "snatch-webhook"}}{{end}}` +
		`{{define "right"}}{{template "what" .}}: {{if eq (len .Names) 1}}1 entry{{else}}{{len .Names}} entries{{end}} ` +
		`({{join .Names ", "}}) send Pod CREATE in namespaces labelled {{kyma}} to the webhook, ` +
		`failurePolicy Ignore{{end}}` +
		`{{define "section"}}docs/operations.md, "Emergency disable and restore"{{end}}` +
		`{{define "faults"}}entry {{.Name}}: ` +
		`{{if .NoPodCreate}}rules do not cover CREATE of pods in the core group, v1{{end}}` +
		`{{if .WrongPolicy}}{{if .NoPodCreate}}, {{end}}failurePolicy is {{or .FailurePolicy "unset (Fail)"}}, ` +
		`want Ignore: a webhook outage would block Pod creation{{end}}` +
		`{{if or .SelectorErr .Unselected}}{{if or .NoPodCreate .WrongPolicy}}, {{end}}{{end}}` +
		`{{if .SelectorErr}}namespaceSelector is invalid: {{.SelectorErr}}{{else if .Unselected}}` +
		`namespaceSelector {{printf "%q" .Selector}} does not select a namespace labelled {{kyma}}{{end}}{{end}}`
	phrases := map[finding]phrase{
		keyConfigMissing: {`{{template "what" .}} not found; the API server calls no webhook for Pods`,
			`{{template "apply" .}}; or fix --webhook-configuration.`},
		keyConfigEmpty: {`{{template "what" .}} has no webhook entries`, `{{template "apply" .}}.`},
		keyConfigWrong: {
			`{{template "what" .}}: {{range $i, $e := .Wrong}}{{if $i}}; {{end}}{{template "faults" $e}}{{end}}`,
			`{{template "apply" .}}, or compare the MWC with the one in that install.yaml.`},
		keyConfigRight: {`{{template "right" .}}`, ""},
	}
	maps.Copy(phrases, disablePhrases())
	return itemWords{facts: configFacts{}, partials: partials, phrases: phrases}
}

// disablePhrases word the emergency disable: the MWC it deleted, and its
// marker left beside an MWC that is back.
func disablePhrases() map[finding]phrase {
	return map[finding]phrase{
		keyConfigDisabled: {
			`{{template "what" .}} not found, under the emergency disable ({{template "marker" .Disable}}): ` +
				`the API server calls no webhook for Pods, and Kyma Pods are created without the term`,
			`To end the disable, restore as {{template "section"}} says: on a Kyma runtime, take the label ` +
				`operator.kyma-project.io/skip-reconciliation off its kim-snatch Manifest; elsewhere, ` +
				`{{template "reinstall" "snatch-webhook"}}. Once ca-bundle passes, delete the marker last: ` +
				`{{template "unmark" .Disable}}.`},
		keyConfigMarkerLeft: {
			`{{template "right" .}}; but the emergency-disable marker is still there ({{template "marker" .Disable}}): ` +
				`a restore left it behind, or a deployer re-created the MWC during the disable`,
			`If the restore is done, delete the marker as its last step: {{template "unmark" .Disable}}. ` +
				`If the disable is to hold, pause the deployer and delete the MWC again ({{template "section"}}).`},
	}
}

// Keys of ca-bundle.
const (
	keyBundleNoCA      finding = "no-ca"      // ca-secret found no usable CA
	keyBundleNoMWC     finding = "no-mwc"     // no MWC to compare
	keyBundleNoEntries finding = "no-entries" // the MWC has no entries
	keyBundleMissing   finding = "missing"    // entries that do not trust the CA
	keyBundleTrusted   finding = "trusted"
)

func caBundleWords() itemWords {
	const partials = `{{define "ca"}}the CA sha256 {{.Fingerprint}} from Secret ` +
		`{{.SecretNamespace}}/{{.SecretName}}{{end}}` +
		`{{define "problem"}}{{.Name}} ({{if .Empty}}caBundle is empty{{else if .ParseErr}}` +
		`caBundle does not parse: {{.ParseErr}}{{else}}caBundle holds {{.Others}} other certificate(s){{end}}){{end}}`
	return itemWords{facts: bundleFacts{}, partials: partials, phrases: map[finding]phrase{
		keyBundleNoCA: {
			`no usable CA in Secret {{.SecretNamespace}}/{{.SecretName}} to compare with`, ""},
		keyBundleNoMWC: {`{{template "mwcAbsent" .}}`, ""},
		keyBundleNoEntries: {
			`MutatingWebhookConfiguration {{.WebhookConfiguration}} has no webhook entries`, ""},
		keyBundleMissing: {
			`MutatingWebhookConfiguration {{.WebhookConfiguration}}: entries without {{template "ca" .}} ` +
				`({{len .Missing}} of {{.Entries}}): ` +
				`{{range $i, $e := .Missing}}{{if $i}}, {{end}}{{template "problem" $e}}{{end}}; ` +
				`the API server cannot verify the webhook and admits Pods without the affinity`,
			`The syncer leader writes the caBundle within seconds; check syncer-lease and its logs and Events: ` +
				`kubectl -n {{.Namespace}} logs -l app.kubernetes.io/name=cabundle-syncer.`},
		keyBundleTrusted: {
			`{{if eq .Entries 1}}the 1 entry of {{.WebhookConfiguration}} trusts{{else}}all {{.Entries}} entries ` +
				`of {{.WebhookConfiguration}} trust{{end}} {{template "ca" .}}`, ""},
	}}
}

// Keys of namespace.
const (
	keyNamespaceMissing    finding = "missing"    // no such namespace
	keyNamespaceNoMWC      finding = "no-mwc"     // no selector to evaluate
	keyNamespaceSent       finding = "sent"       // an entry selects it
	keyNamespaceUnlabelled finding = "unlabelled" // not Kyma's
	keyNamespaceExcluded   finding = "excluded"   // Kyma's, but no entry selects it
)

func namespaceWords() itemWords {
	const partials = `{{define "exclusion"}}{{.Name}} ({{if .Err}}invalid namespaceSelector: {{.Err}}{{else}}` +
		`namespaceSelector {{printf "%q" .Selector}}{{end}}){{end}}`
	return itemWords{facts: namespaceFacts{}, partials: partials, phrases: map[finding]phrase{
		keyNamespaceMissing: {`namespace {{.TargetNamespace}} not found`,
			`Check the name given to --target-namespace: kubectl get namespaces.`},
		keyNamespaceNoMWC: {
			`{{template "mwcAbsent" .}}, so there is no namespaceSelector to evaluate`, ""},
		keyNamespaceSent: {
			`Pods created in {{.TargetNamespace}} are sent to the webhook (entries: {{join .Selecting ", "}}); ` +
				`Pods labelled {{optOut}} are left alone`, ""},
		keyNamespaceUnlabelled: {
			`Pods created in {{.TargetNamespace}} are not sent to the webhook: the namespace lacks the label {{kyma}}`,
			`Only namespaces Kyma manages get the affinity; if Kyma manages {{.TargetNamespace}}, its label is ` +
				`missing (kubectl label namespace {{.TargetNamespace}} {{kyma}}).`},
		keyNamespaceExcluded: {
			`Pods created in {{.TargetNamespace}} are not sent to the webhook although it is labelled {{kyma}}: ` +
				`excluded by {{range $i, $e := .Excluding}}{{if $i}}, {{end}}{{template "exclusion" $e}}` +
				`{{else}}there are no webhook entries{{end}}`,
			`The namespace is excluded on purpose (kube-system) or the selector was changed; compare with the MWC ` +
				`in snatch-webhook's install.yaml. To exclude single Pods use {{optOut}} instead.`},
	}}
}
