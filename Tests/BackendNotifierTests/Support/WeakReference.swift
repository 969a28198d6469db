/// A weak reference a test can hand to a polling closure: whether an object was released.
final class WeakReference<Object: AnyObject>: @unchecked Sendable {
    weak var object: Object?

    init(_ object: Object) {
        self.object = object
    }

    var isReleased: Bool { object == nil }
}
