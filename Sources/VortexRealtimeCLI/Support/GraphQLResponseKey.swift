import RealtimePreflight

/// The response key of a subscription's root field — its alias, or else its name — read from the GraphQL document.
///
/// `tail --transport graphql` prints each `next`'s `data` object; the transport hands over the root field's value
/// (``SubscriberCore/RealtimePayload/json``), so the CLI puts it back under this key: `{"<key>":<value as sent>}`.
/// A subscription selects exactly one root field (GraphQL spec, "Single root field"), so the key is unambiguous.
/// The document is read by RealtimePreflight's ``GraphQLSelectionParser``, the package's one GraphQL reader.
enum GraphQLResponseKey {
    /// Why the key could not be found.
    struct Problem: Error, Equatable, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The response key of the root field of the subscription `operationName` (or of the document's only operation).
    static func find(in document: String, operationName: String?) throws(Problem) -> String {
        let selection: [GraphQLSelection]
        do {
            selection = try GraphQLSelectionParser.subscription(in: document, operationName: operationName)
        } catch .severalOperations {
            throw Problem("several operations: give --operation-name")
        } catch {
            throw Problem(error.description)
        }
        guard let root = selection.first, !root.isFragment else {
            throw Problem("the subscription's root field must be written out (not in a fragment) for tail to name it")
        }
        return root.responseKey
    }
}
