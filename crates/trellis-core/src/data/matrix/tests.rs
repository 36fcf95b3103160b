//! Tests of the matrix reader.

use super::*;

fn spec(delimiter: Delimiter, label: Option<Column>) -> MatrixSpec {
    MatrixSpec {
        delimiter: Some(delimiter),
        header: true,
        label_column: label,
        ..MatrixSpec::default()
    }
}

#[test]
fn csv_with_a_label_column_and_quotes() {
    let text = "a,\"label, with comma\",b\r\n1,x,2\n\n3.5,\"y\",-4e-1\n";
    let m = PointMatrix::parse(
        text,
        &spec(
            Delimiter::Comma,
            Some(Column::Name("label, with comma".into())),
        ),
        "t.csv",
    )
    .unwrap();
    assert_eq!(m.features, ["a", "b"]);
    assert_eq!(m.n_points(), 2);
    assert_eq!(m.row(1), [3.5, -0.4]);
    assert_eq!(m.labels.unwrap(), ["x", "y"]);
}

#[test]
fn bad_cells_name_line_and_column() {
    let e = PointMatrix::parse("a\tb\n1\tNA\n", &spec(Delimiter::Tab, None), "t.tsv")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line 2") && e.contains("\"b\"") && e.contains("NA"),
        "{e}"
    );
    let e = PointMatrix::parse("a,b\n1,2\n1\n", &spec(Delimiter::Comma, None), "t.csv")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line 3") && e.contains("1 cells, but the header has 2"),
        "{e}"
    );
    let e = PointMatrix::parse("a,b\n1,inf\n", &spec(Delimiter::Comma, None), "t.csv")
        .unwrap_err()
        .to_string();
    assert!(e.contains("finite"), "{e}");
    let e = PointMatrix::parse(
        "a,b\n1,2\n",
        &spec(Delimiter::Comma, Some(Column::Name("c".into()))),
        "t.csv",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("no column named \"c\""), "{e}");
    for text in ["", "a,b\n", "\n\n"] {
        let e = PointMatrix::parse(text, &spec(Delimiter::Comma, None), "t.csv").unwrap_err();
        assert!(!e.to_string().contains('\n'), "{e}");
    }
}

#[test]
fn the_cell_limit_stops_the_read_at_the_row_that_passes_it() {
    // 10,000 features: the limit of 10^7 values is passed by row 1,001 (line 1,002).
    let d = MAX_FEATURES;
    let header: Vec<String> = (0..d).map(|j| format!("f{j}")).collect();
    let row = format!("{}\n", vec!["0"; d].join(","));
    let text = format!("{}\n{}", header.join(","), row.repeat(1500));
    let e = PointMatrix::parse(&text, &spec(Delimiter::Comma, None), "t.csv")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line 1002") && e.contains("about 1500 points × 10000 features"),
        "{e}"
    );
    let wide = format!("{},x\n1\n", header.join(","));
    let e = PointMatrix::parse(&wide, &spec(Delimiter::Comma, None), "t.csv")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 1") && e.contains("10001 features"), "{e}");
    let ok = PointMatrix::parse(
        &text[..text.len() - 500 * row.len()],
        &spec(Delimiter::Comma, None),
        "t.csv",
    )
    .unwrap();
    assert_eq!((ok.n_points(), ok.dim()), (1000, d));
}

#[test]
fn a_quoted_line_break_is_an_unbalanced_quote() {
    for (text, lines) in [
        ("a,b\n1,\"2\n3,4\n5,6\"\n7,8\n", "lines 2 to 4"),
        ("a,b\n1,2\n3,\"4\n5,6\n", "lines 3 to 4"),
    ] {
        let e = PointMatrix::parse(text, &spec(Delimiter::Comma, None), "t.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains(lines) && e.contains("unbalanced quote"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn the_bundled_usps_and_animals_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
    let usps = PointMatrix::usps(&root.join("usps/usps_test.txt")).unwrap();
    assert_eq!((usps.n_points(), usps.dim()), (2007, 256));
    let labels = usps.labels.as_ref().unwrap();
    assert_eq!(labels[0], "9", "the ESL zip.test order starts with a 9");
    assert!(usps.values.iter().all(|v| (-1.0..=1.0).contains(v)));
    let animals = PointMatrix::animals33(&root.join("animals33/animals33_features.tsv")).unwrap();
    assert_eq!((animals.n_points(), animals.dim()), (33, 102));
    assert_eq!(animals.labels.as_ref().unwrap()[0], "Elephant");
    let ones = animals.values.iter().filter(|&&v| v == 1.0).count();
    let zeros = animals.values.iter().filter(|&&v| v == 0.0).count();
    assert_eq!(
        (ones, zeros),
        (1032, 2334),
        "the counts the data's README states"
    );
}

fn infer(delimiter: Delimiter) -> MatrixSpec {
    MatrixSpec {
        infer: true,
        ..spec(delimiter, None)
    }
}

#[test]
fn a_first_line_of_numbers_is_a_point_and_said() {
    let m = PointMatrix::parse("1\t2\n3\t4\n5\t6\n", &infer(Delimiter::Tab), "t.tsv").unwrap();
    assert_eq!((m.n_points(), m.dim()), (3, 2));
    assert_eq!(m.features, ["x1", "x2"]);
    assert_eq!(m.row(0), [1.0, 2.0]);
    assert!(m.notes[0].contains("only numbers"), "{:?}", m.notes);
    // Without inference the first line is the header, as before.
    let m = PointMatrix::parse("1\t2\n3\t4\n", &spec(Delimiter::Tab, None), "t.tsv").unwrap();
    assert_eq!((m.n_points(), m.notes.len()), (1, 0));
    // A one-line file of numbers is one point.
    let m = PointMatrix::parse("1,2\n", &infer(Delimiter::Comma), "t.csv").unwrap();
    assert_eq!(m.n_points(), 1);
}

#[test]
fn the_one_column_of_text_is_the_labels() {
    let m = PointMatrix::parse(
        "a,b,label\n1,2,g0\n3,4,g1\n",
        &infer(Delimiter::Comma),
        "t.csv",
    )
    .unwrap();
    assert_eq!(m.features, ["a", "b"]);
    assert_eq!(m.labels.as_deref().unwrap(), ["g0", "g1"]);
    assert_eq!(m.label_name.as_deref(), Some("label"));
    assert!(m.notes[0].contains("--label-column label"), "{:?}", m.notes);
    // Without a header: the first line is a point like the next, the text column the labels
    // (values repeat) or the names (every value differs).
    let m = PointMatrix::parse("1,2,x\n3,4,y\n5,6,x\n", &infer(Delimiter::Comma), "t.csv").unwrap();
    assert_eq!((m.n_points(), m.dim()), (3, 2));
    assert_eq!(m.labels.as_deref().unwrap(), ["x", "y", "x"]);
    let m = PointMatrix::parse("1,2,x\n3,4,y\n", &infer(Delimiter::Comma), "t.csv").unwrap();
    assert_eq!(
        (m.labels, m.names.as_deref().unwrap()),
        (None, &["x".to_string(), "y".into()][..])
    );
    // A header of numbers naming a column of numeric classes stays a header, and the column a
    // feature, said with the flag that makes it the labels.
    let m = PointMatrix::parse(
        "0,1,target\n0.5,1.5,2\n0.1,0.2,1\n",
        &infer(Delimiter::Comma),
        "t.csv",
    )
    .unwrap();
    assert_eq!((m.n_points(), m.dim(), m.labels.is_none()), (2, 3, true));
    assert!(
        m.notes[0].contains("--label-column target"),
        "{:?}",
        m.notes
    );
    // Text further down a column of numbers: the error says which column holds the text.
    let e = PointMatrix::parse("a,b\n1,g0\nh,g1\n", &infer(Delimiter::Comma), "t.csv")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line 3") && e.contains("column \"b\" already holds text"),
        "{e}"
    );
    // Named but not numeric: the flag and the config key.
    let e = PointMatrix::parse("a,b\n1,x\n", &spec(Delimiter::Comma, None), "t.csv")
        .unwrap_err()
        .to_string();
    assert!(e.contains("--label-column NAME"), "{e}");
}
