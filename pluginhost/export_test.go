package pluginhost

// SetAfterVerify installs a hook run between a binary's verification and
// its start (nil removes it); tests swap the file there.
func SetAfterVerify(fn func()) { afterVerify = fn }
