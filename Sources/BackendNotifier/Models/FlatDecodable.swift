/// A payload model that ``FlatJSONDecoder`` fills member by member, without going through `Decoder`: the device
/// models, which carry nearly every event. Generic `Decoder` plumbing (boxed containers, coding keys built per field,
/// runtime type metadata) cost more than the decoding itself.
///
/// `init(flat:)` must decode exactly what the model's `Decodable` conformance decodes: every coding key, `null` as
/// `nil`, unknown keys ignored, a value of another type rejected (`FlatJSONDecoder.Unsupported`, so `JSONDecoder`
/// decides and reports). `FlatJSONDecoderTests` checks both agree, key by key and on seeded mutations.
protocol FlatDecodable: Decodable {
    init(flat object: FlatJSONDecoder.ObjectView) throws
}
