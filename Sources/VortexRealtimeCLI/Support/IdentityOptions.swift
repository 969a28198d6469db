import ArgumentParser

/// `--user U`, `--org O`: whom a command acts for, declared once. Commands that need them say so
/// (``require(user:org:)``); `parity` and `drill` fill them from the embedded backend's directory.
struct IdentityOptions: ParsableArguments {
    @Option(help: "The signed-in user's id.")
    var user: String?

    @Option(help: "The user's organization id.")
    var org: String?

    /// Fails naming the first required option that is missing.
    func require(user needsUser: Bool = true, org needsOrg: Bool = false) throws {
        if needsUser, user?.isEmpty ?? true { throw ValidationError("--user: required") }
        if needsOrg, org?.isEmpty ?? true { throw ValidationError("--org: required") }
    }
}
