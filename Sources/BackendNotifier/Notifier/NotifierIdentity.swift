/// Who is signed in, as the notifier was last told (`userId` `nil`: nobody, no connection at all).
package struct NotifierIdentity: Equatable, Sendable {
    /// The signed-in user, or `nil` when signed out.
    package var userId: String?
    /// The user's organization.
    package var organizationId: String?

    /// An identity.
    package init(userId: String?, organizationId: String?) {
        self.userId = userId
        self.organizationId = organizationId
    }
}
