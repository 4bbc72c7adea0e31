package plan

// hooks let the package's tests see and alter what one stage of the
// executor hands the next, to break one rule of the plan on purpose and
// show that the differential test notices (TestDiffCatches), or to make a
// plan panic (TestPanicFallsBack). Production code knows the stages, not
// the rules: it calls a hook, when one is set, at the boundary of a stage,
// never inside one. Only tests set them (Options.hooks is unexported); nil
// in production.
type hooks struct {
	// entry sees a document's cache entry once made, before any variant
	// is compiled.
	entry func(*entry)
	// compiled sees each plan once compiled, before it is cached.
	compiled func(*Plan)
	// fetched sees a request's data once fetched, before it is written.
	fetched func(*runner)
	// writing sees the writer before it writes.
	writing func(*writer)
	// written sees the response's data and errors once written.
	written func(data []byte, errs []error) ([]byte, []error)
}
