// Package admissiontest holds the generic admission handler: the same
// decision served the way generic admission libraries serve it, as
// kim-snatch's old implementation did. It is the baseline that both the
// in-process benchmark of package admission and the generic-webhook
// command of the webhook benchmark (test/bench) measure the snatch-webhook
// against, so that the two compare against one baseline.
//
// It is imported by tests and benchmarks only.
package admissiontest
