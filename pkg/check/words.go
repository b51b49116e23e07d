package check

import (
	"fmt"
	"maps"
	"slices"
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
	`{{define "from"}}{{if .PoolPod}}from Pod {{.PoolPod}}{{else}}the default{{end}}{{end}}`

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
		for _, name := range []string{"reinstall", "permitted", "readFix"} {
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
	keyConfigMissing finding = "missing"    // the MWC does not exist
	keyConfigEmpty   finding = "no-entries" // it has no entries
	keyConfigWrong   finding = "wrong"      // entries that do not send Kyma Pods
	keyConfigRight   finding = "right"
)

func webhookConfigurationWords() itemWords {
	const partials = `{{define "what"}}MutatingWebhookConfiguration {{.WebhookConfiguration}}{{end}}` +
		`{{define "apply"}}The syncer never creates or edits anything but the caBundle: ` +
		`{{template "reinstall" "snatch-webhook"}}{{end}}` +
		`{{define "faults"}}entry {{.Name}}: ` +
		`{{if .NoPodCreate}}rules do not cover CREATE of pods in the core group, v1{{end}}` +
		`{{if .WrongPolicy}}{{if .NoPodCreate}}, {{end}}failurePolicy is {{or .FailurePolicy "unset (Fail)"}}, ` +
		`want Ignore: a webhook outage would block Pod creation{{end}}` +
		`{{if or .SelectorErr .Unselected}}{{if or .NoPodCreate .WrongPolicy}}, {{end}}{{end}}` +
		`{{if .SelectorErr}}namespaceSelector is invalid: {{.SelectorErr}}{{else if .Unselected}}` +
		`namespaceSelector {{printf "%q" .Selector}} does not select a namespace labelled {{kyma}}{{end}}{{end}}`
	return itemWords{facts: configFacts{}, partials: partials, phrases: map[finding]phrase{
		keyConfigMissing: {`{{template "what" .}} not found; the API server calls no webhook for Pods`,
			`{{template "apply" .}}; or fix --webhook-configuration.`},
		keyConfigEmpty: {`{{template "what" .}} has no webhook entries`, `{{template "apply" .}}.`},
		keyConfigWrong: {
			`{{template "what" .}}: {{range $i, $e := .Wrong}}{{if $i}}; {{end}}{{template "faults" $e}}{{end}}`,
			`{{template "apply" .}}, or compare the MWC with the one in that install.yaml.`},
		keyConfigRight: {
			`{{template "what" .}}: {{if eq (len .Names) 1}}1 entry{{else}}{{len .Names}} entries{{end}} ` +
				`({{join .Names ", "}}) send Pod CREATE in namespaces labelled {{kyma}} to the webhook, ` +
				`failurePolicy Ignore`, ""},
	}}
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

// Keys of webhook-endpoints.
const (
	keyEndpointsNoMWC   finding = "no-mwc"   // no entries to follow
	keyEndpointsBroken  finding = "broken"   // entries the API server cannot call
	keyEndpointsNotOurs finding = "not-ours" // no entry calls the webhook's Service
	keyEndpointsForeign finding = "foreign"  // entries of another system
	keyEndpointsReady   finding = "ready"
)

// targetPartials word an entryTarget: where its calls go, and why they cannot.
const targetPartials = `{{define "target"}}entry {{.Entry.Name}}{{if .Ref}} → Service {{.Ref.Namespace}}/` +
	`{{.Ref.Name}} port {{.Port}} path {{.Path}}{{else}} (URL){{end}}{{end}}` +
	`{{define "problems"}}{{if .BadPath}}calls path {{.Path}}, which the webhook does not serve ` +
	`(/mutate-pod, /mutate--v1-pod){{if or .Missing .NoPort .NoReady}}, {{end}}{{end}}` +
	`{{if .Missing}}Service {{.Ref.Namespace}}/{{.Ref.Name}} does not exist` +
	`{{else if .NoPort}}Service {{.Ref.Namespace}}/{{.Ref.Name}} has no port {{.Port}}` +
	`{{else if .NoReady}}Service {{.Ref.Namespace}}/{{.Ref.Name}} has no ready endpoint for port {{.Port}}` +
	`{{end}}{{end}}`

func webhookEndpointsWords() itemWords {
	const partials = targetPartials +
		`{{define "fine"}}{{range $i, $t := .Fine}}{{if $i}}; {{end}}{{template "target" $t}}: ` +
		`{{len $t.Ready}} ready endpoints{{end}}{{end}}`
	return itemWords{facts: endpointsFacts{}, partials: partials, phrases: map[finding]phrase{
		keyEndpointsNoMWC: {`{{template "mwcAbsent" .}}`, ""},
		keyEndpointsBroken: {
			`{{range $i, $t := .Broken}}{{if $i}}; {{end}}{{template "target" $t}}: {{template "problems" $t}}{{end}}`,
			`The API server admits these Pods without the term: to restore the Service and the entries, ` +
				`{{template "reinstall" "snatch-webhook"}}; and see "Webhook unreachable" in ` +
				`docs/troubleshooting.md for endpoints that are not ready.`},
		keyEndpointsNotOurs: {
			`no entry of {{.WebhookConfiguration}} calls Service {{.Namespace}}/{{.WebhookService}}`,
			`{{template "reinstall" "snatch-webhook"}}; or fix --webhook-service.`},
		keyEndpointsForeign: {
			`{{template "fine" .}}; entries of another system: {{range $i, $t := .Foreign}}{{if $i}}; {{end}}` +
				`{{template "target" $t}}{{if $t.Denied}}: Service not readable with these credentials` +
				`{{else if or $t.Missing $t.NoPort $t.NoReady}}: {{template "problems" $t}}{{end}}{{end}}`,
			`Remove the other entries, such as an earlier installation's: ` +
				`kubectl edit mutatingwebhookconfiguration {{.WebhookConfiguration}} (docs/migration.md).`},
		keyEndpointsReady: {`{{template "fine" .}}`, ""},
	}}
}

// String names an endpoint by its address and Pod.
func (e endpoint) String() string {
	if e.pod == "" {
		return e.addr
	}
	return e.addr + " (Pod " + e.pod + ")"
}

// Keys of served-certificate.
const (
	keyServedNoMWC       finding = "no-mwc"       // no entries to dial
	keyServedNoBundle    finding = "no-bundle"    // an entry's caBundle holds no certificate
	keyServedNoEndpoint  finding = "no-endpoint"  // nothing ready to dial
	keyServedBad         finding = "bad"          // certificates that do not verify
	keyServedUnreachable finding = "unreachable"  // from a Pod, where every Pod address is in reach
	keyServedOutOfReach  finding = "out-of-reach" // from outside the cluster
	keyServedVerified    finding = "verified"
)

func servedCertificateWords() itemWords {
	const partials = `{{define "svc"}}{{.WebhookService}}.{{.Namespace}}.svc{{end}}` +
		`{{define "line"}}{{.Name}}: serial {{printf "%X" .Serial}}, notAfter {{time .NotAfter}}{{end}}` +
		`{{define "lines"}}{{range $i, $e := .}}{{if $i}}; {{end}}{{template "line" $e}}{{end}}{{end}}` +
		`{{define "unreached"}}{{range $i, $e := .}}{{if $i}}, {{end}}{{$e.Name}}{{end}}{{end}}` +
		`{{define "elsewhere"}}see "Webhook unreachable" in docs/troubleshooting.md.{{end}}`
	return itemWords{facts: servedFacts{}, detail: servedEndpoint{}, partials: partials, phrases: map[finding]phrase{
		keyServedNoMWC:      {`{{template "mwcAbsent" .}}`, ""},
		keyServedNoBundle:   {`entry {{.Entry}} has no usable caBundle to verify with`, ""},
		keyServedNoEndpoint: {`no ready endpoint to dial`, ""},
		keyServedBad: {
			`{{len .Bad}} of {{.Dialled}} endpoints serve a certificate that does not verify for {{template "svc" .}} ` +
				`against the caBundle: {{template "lines" .Bad}}`,
			`The API server fails open on calls to these replicas: restart their Pods so that they load the ` +
				`Secret's certificate, and check that the Secret and the caBundle come from the same CA (ca-bundle); ` +
				`{{template "elsewhere"}}`},
		keyServedUnreachable: {
			`{{len .Unreachable}} of {{.Dialled}} endpoints could not be reached from this Pod of the cluster: ` +
				`{{template "unreached" .Unreachable}}; {{len .Good}} verify`,
			`A NetworkPolicy drops this Pod's connections to the webhook's Pods, or they do not listen: ` +
				`under a deny-all, the check needs the shipped NetworkPolicy ` +
				`kyma-project.io--kim-snatch-check-allow-to-webhook (deploy/README.md, "Network policies"); ` +
				`{{template "elsewhere"}}`},
		keyServedOutOfReach: {
			`{{len .Unreachable}} of {{.Dialled}} endpoints could not be reached from where check runs: ` +
				`{{template "unreached" .Unreachable}}; {{len .Good}} verify`,
			`Pod addresses are reachable only inside the cluster: run the check there (kubectl -n {{.Namespace}} ` +
				`create job --from=cronjob/kim-snatch-check kim-snatch-check-$(date -u +%Y%m%d%H%M%S), ` +
				`docs/operations.md "Run the check in the cluster"), or {{template "elsewhere"}}`},
		keyServedVerified: {
			`{{.Dialled}} endpoints serve certificates that verify for {{template "svc" .}} against the caBundle: ` +
				`{{template "lines" .Good}}`, ""},
		keyDetail: {`{{if .Unreached}}{{.Name}}: not reached: {{oneLine .Err}}{{else}}{{template "line" .}}: ` +
			`{{if .Err}}does not verify: {{.Err}}{{else}}verifies{{end}}{{end}}`, ""},
	}}
}

// Keys of admission.
const (
	keyAdmissionNoNamespace finding = "no-namespace" // the dry run's namespace does not exist
	keyAdmissionRefused     finding = "refused"      // the dry run was refused
	keyAdmissionNoTerm      finding = "no-term"      // the Pod came back without a term on the key
	keyAdmissionTwoTerms    finding = "two-terms"    // more than one term on the key
	keyAdmissionOtherTerm   finding = "other-term"   // one term, not the webhook's
	keyAdmissionNoMWC       finding = "no-mwc"       // the right term, and no MWC
	keyAdmissionMWCDenied   finding = "mwc-denied"   // the right term, the MWC not readable
	keyAdmissionMWCFailed   finding = "mwc-failed"   // the right term, the MWC not read
	keyAdmissionNotCalled   finding = "not-called"   // the right term, no entry calls the webhook
	keyAdmissionTerm        finding = "term"
)

func admissionWords() itemWords {
	const partials = `{{define "term"}}{{range $i, $e := .Preference.MatchExpressions}}{{if $i}}, {{end}}` +
		`{{$e.Key}} {{$e.Operator}} {{$e.Values}}{{end}} (weight {{.Weight}}){{end}}` +
		`{{define "came"}}a dry-run Pod in {{.AdmissionNamespace}} came back after {{.Took}} with ` +
		`{{range $i, $t := .Terms}}{{if $i}} and {{end}}{{template "term" $t}}{{end}}{{end}}` +
		`{{define "want"}}{{.PoolLabelKey}} In [{{.Pool}}]{{end}}` +
		`{{define "find"}}Find the webhook that adds this term (kubectl get mutatingwebhookconfigurations), ` +
		`such as an old kim-snatch{{end}}`
	phrases := admissionProbePhrases()
	maps.Copy(phrases, admissionTermPhrases())
	return itemWords{facts: admissionFacts{}, partials: partials, phrases: phrases}
}

// admissionProbePhrases word a dry run that did not come back with a term.
func admissionProbePhrases() map[finding]phrase {
	return map[finding]phrase{
		keyAdmissionNoNamespace: {
			`namespace {{.AdmissionNamespace}}, where the dry run goes, not found: {{.Err}}`,
			`The syncer's release ships the namespace with the check's identity: ` +
				`{{template "reinstall" "cabundle-syncer"}}; or set --admission-namespace.`},
		keyAdmissionRefused: {
			`dry-run create of a Pod in {{.AdmissionNamespace}} refused after {{.Took}}: {{.Err}}`,
			`The namespace's admission rejected the probe Pod: compare its ResourceQuota, LimitRange and ` +
				`Pod Security labels with those of the syncer release's install.yaml (deploy/syncer/check.yaml), ` +
				`and list what runs there (kubectl -n {{.AdmissionNamespace}} get pods).`},
		keyAdmissionNoTerm: {
			`a dry-run Pod in {{.AdmissionNamespace}} came back without the term on {{.PoolLabelKey}} ` +
				`after {{.Took}}: {{if .TimedOut}}the call waited out the timeout of {{.Timeout}}: ` +
				`the webhook accepts connections but does not answer (a frozen replica, or a network path that ` +
				`drops the answers){{else}}the API server could not call the webhook or did not send it the Pod: ` +
				`a caBundle it does not trust, no endpoint, a NetworkPolicy, or a namespaceSelector that skips ` +
				`{{.AdmissionNamespace}}{{end}}`,
			`Every Kyma Pod is admitted so now. Read the other items for the cause; with all of them PASS, ` +
				`see "Webhook unreachable" in docs/troubleshooting.md (kube-apiserver log, NetworkPolicies, ` +
				`the path to the webhook's Service).`},
	}
}

// admissionTermPhrases word the terms a dry run came back with.
func admissionTermPhrases() map[finding]phrase {
	return map[finding]phrase{
		keyAdmissionTwoTerms: {
			`{{template "came" .}}: {{len .Terms}} preferred terms on {{.PoolLabelKey}}, where the webhook adds ` +
				`exactly one, {{template "want" .}} (pool {{template "from" .}}); ` +
				`more than one webhook mutates Kyma Pods`,
			`Find the other webhook that adds a term on {{.PoolLabelKey}} ` +
				`(kubectl get mutatingwebhookconfigurations), such as an old kim-snatch left behind, ` +
				`and remove it (docs/migration.md).`},
		keyAdmissionOtherTerm: {
			`{{template "came" .}}, not the webhook's term {{template "want" .}} (pool {{template "from" .}}): ` +
				`another webhook added it, or the webhook prefers another pool than the one it was configured with`,
			`{{template "find"}}, and remove it (docs/migration.md); if the pool is the one wanted, ` +
				`set the webhook's --worker-pool to it.`},
		keyAdmissionNoMWC: {
			`{{template "came" .}}, but MutatingWebhookConfiguration {{.WebhookConfiguration}} does not exist: ` +
				`another webhook added it`,
			`{{template "find"}}, and {{template "reinstall" "snatch-webhook"}}.`},
		keyAdmissionMWCDenied: {
			`{{template "came" .}}; whose term it is was not seen: these credentials may not ` +
				`get MutatingWebhookConfiguration {{.WebhookConfiguration}}: {{.Err}}`,
			`{{template "permitted" (print "get MutatingWebhookConfiguration " .WebhookConfiguration)}}`},
		keyAdmissionMWCFailed: {
			`{{template "came" .}}, but {{template "mwcAbsent" .}} to tell whose term it is`, ""},
		keyAdmissionNotCalled: {
			`{{template "came" .}}, but no entry of MutatingWebhookConfiguration {{.WebhookConfiguration}} calls ` +
				`Service {{.Namespace}}/{{.WebhookService}}: another webhook added it, such as the old kim-snatch ` +
				`before the migration switches the entry`,
			`Finish the migration (docs/migration.md), or {{template "reinstall" "snatch-webhook"}}.`},
		keyAdmissionTerm: {
			`a dry-run Pod in {{.AdmissionNamespace}} came back with the webhook's term ` +
				`{{template "term" (index .Terms 0)}} in {{.Took}} (pool {{template "from" .}})`, ""},
	}
}

// Keys of kyma-pool.
const (
	keyPoolMissing finding = "missing" // no Node in the pool
	keyPoolNoRoom  finding = "no-room" // no Node of it takes Pods
	keyPoolRoom    finding = "room"
)

func kymaPoolWords() itemWords {
	const partials = `{{define "pool"}}pool {{.Pool}} ({{template "from" .}}): {{.Members}} Nodes, ` +
		`{{.Usable}} Ready and schedulable{{if .Tainted}}; {{len .Tainted}} Ready but tainted, ` +
		`not room for Kyma Pods: {{names .Tainted}}{{end}}; {{if .RoomErr}}requests not read: {{.RoomErr}}` +
		`{{else}}CPU requested {{.CPURequested}} of {{.CPUAllocatable}} allocatable, ` +
		`memory {{.MemoryRequested}} of {{.MemoryAllocatable}}{{end}}{{end}}`
	return itemWords{facts: poolFacts{}, partials: partials, phrases: map[finding]phrase{
		keyPoolMissing: {
			`no Node carries {{.PoolLabelKey}}={{.Pool}} (the webhook's --worker-pool, {{template "from" .}}); ` +
				`pools present: {{if .Present}}{{names .Present}}{{else}}none (no Node has the label){{end}}`,
			`Set the webhook's --worker-pool to the Kyma pool's name (kubectl get nodes -L {{.PoolLabelKey}}), ` +
				`or add the Kyma worker pool to the Shoot. Until then the term matches no node.`},
		keyPoolNoRoom: {`{{template "pool" .}}`,
			`No Node of the Kyma pool takes Pods: check them with kubectl describe nodes ` +
				`-l {{.PoolLabelKey}}={{.Pool}} (NotReady, cordoned, or tainted NoSchedule or NoExecute).`},
		keyPoolRoom: {`{{template "pool" .}}`, ""},
	}}
}

func (p poolSize) String() string    { return fmt.Sprintf("%s (%d)", p.Name, p.Nodes) }
func (n taintedNode) String() string { return n.Name + " (" + n.Taint + ")" }

// Keys of placement.
const (
	keyPlacementAllOn finding = "all-on" // every Kyma Pod carries the term and runs on the pool
	keyPlacementOff   finding = "off"    // some lack the term or run off the pool
)

func placementWords() itemWords {
	const partials = `{{define "own"}}{{if .Own}}; {{.Own}} more choose their pool themselves{{end}}{{end}}` +
		`{{define "count"}}{{.Total}} Kyma Pods in {{.Namespaces}} namespaces{{end}}` +
		`{{define "cause"}}{{if eq .Kind "gone"}}unknown (the Node no longer exists){{else if eq .Kind "unread"}}` +
		`unknown (Nodes not readable){{else if eq .Kind "taint"}}taint {{.Taint}}{{else if eq .Kind "room"}}` +
		`pool has room now (it was full or missing when the Pod was scheduled){{else}}pool {{.Kind}}{{end}}{{end}}`
	return itemWords{facts: placementFacts{}, detail: placedPod{}, partials: partials, sortDetails: true,
		phrases: map[finding]phrase{
			keyPlacementAllOn: {
				`{{template "count" .}}; all carry the term, and all bound ones run on pool {{.Pool}}{{template "own" .}}`,
				""},
			keyPlacementOff: {
				`{{template "count" .}}: {{.Lack}} lack the term{{if .Lack}} ({{names .LackOwners}}){{end}}, ` +
					`{{.Off}} carry it but run off pool {{.Pool}}{{if .Off}} ({{causes .Causes}}){{end}}` +
					`{{template "own" .}}{{if .Unjudged}}; {{.Unjudged}} bound Pods with the term not judged, ` +
					`their Nodes could not be read: {{.UnjudgedErr}}{{end}}`,
				`{{if .Unjudged}}Run check with a kubeconfig that may get and list Nodes to include this item.` +
					`{{if or .Lack .Off}} {{end}}{{end}}{{if .Lack}}Once the webhook is healthy, recreate the Pods ` +
					`without the term through their owners: {{restart .LackOwners}}.{{if .Off}} {{end}}{{end}}` +
					`{{if .Off}}Make room in pool {{.Pool}} (see the causes), then recreate the Pods off the pool ` +
					`({{restart .OffOwners}}) or let the descheduler evict them: see "Spill-over" in ` +
					`docs/operations.md and deploy/examples/descheduler.{{end}}`},
			keyDetail: {
				`{{if .Lacks}}lacks the term: {{.Namespace}}/{{.Name}} (owner {{.Owner}}){{else}}off pool: ` +
					`{{.Namespace}}/{{.Name}} on node {{.Node}} ({{if eq .Cause.Kind "gone"}}Node gone{{else}}pool ` +
					`{{or .NodePool "none"}}{{end}}): {{template "cause" .Cause}}; owner {{.Owner}}{{end}}`, ""},
		}}
}

func (o podOwner) String() string { return o.kind + " " + o.namespace + "/" + o.name }

// restartCommand recreates the Pods of a Deployment or StatefulSet.
const restartCommand = "kubectl -n %s rollout restart %s/%s"

// restartHint names what recreates the Pods of owners, as a command where it can.
func restartHint(owners []podOwner) string {
	var cmds, others []string
	for _, o := range owners {
		if o.kind == "Deployment" || o.kind == "StatefulSet" {
			cmds = append(cmds, fmt.Sprintf(restartCommand, o.namespace, strings.ToLower(o.kind), o.name))
		} else {
			others = append(others, o.String())
		}
	}
	return listNames(append(cmds, others...))
}

// causeSummary counts the Pods off the pool by cause, in the order of its words.
func causeSummary(causes map[spill]int) string {
	words := placementWords()
	var summary []string
	for _, cause := range slices.Collect(maps.Keys(causes)) {
		summary = append(summary, say(words, `{{template "cause" .}}`, cause)+fmt.Sprintf(": %d", causes[cause]))
	}
	slices.Sort(summary)
	return strings.Join(summary, ", ")
}
