package sdk

// Serve runs a context plugin process: it speaks the go-plugin handshake on
// stdout, serves gRPC until the host goes away, and never returns normally.
// Call it from main.
func Serve(p Plugin) {
	panic("sdk.Serve: transport not implemented yet") // replaced by the transport work (issue 2)
}

// ServeAssembler runs an assembler process; see Serve.
func ServeAssembler(a Assembler) {
	panic("sdk.ServeAssembler: transport not implemented yet") // replaced by the transport work (issue 2)
}
