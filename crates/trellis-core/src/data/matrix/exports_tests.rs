//! The reader on one file per export style (`data/examples/exports/`, each written as the tool
//! named in its README writes it): what is read, and what is said.

use super::*;
use std::path::PathBuf;

fn export(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/examples/exports")
        .join(file)
}

fn user(file: &str) -> Result<PointMatrix, MatrixError> {
    PointMatrix::load(
        &export(file),
        &MatrixSpec {
            header: true,
            infer: true,
            ..MatrixSpec::default()
        },
    )
}

fn notes(m: &PointMatrix) -> String {
    m.notes.join(" | ")
}

#[test]
fn r_write_csv_and_write_table_give_the_states_as_names() {
    for file in [
        "usarrests_write_csv.csv",
        "usarrests_write_table.csv",
        "usarrests_write_table.txt",
    ] {
        let m = user(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!((m.n_points(), m.dim()), (50, 4), "{file}");
        assert_eq!(
            m.features,
            ["Murder", "Assault", "UrbanPop", "Rape"],
            "{file}"
        );
        let names = m.names.as_ref().unwrap();
        assert_eq!(
            (names[0].as_str(), names[28].as_str()),
            ("Alabama", "New Hampshire")
        );
        assert_eq!(m.row(0), [13.2, 236.0, 58.0, 21.2], "{file}");
        assert_eq!(m.labels, None, "{file}: names are not classes");
        assert!(notes(&m).contains("names"), "{file}: {}", notes(&m));
    }
    let table = user("usarrests_write_table.csv").unwrap();
    assert!(
        notes(&table).contains("one cell fewer"),
        "{}",
        notes(&table)
    );
}

#[test]
fn pandas_index_yields_to_the_column_of_names() {
    let m = user("mtcars_pandas.csv").unwrap();
    assert_eq!((m.n_points(), m.dim()), (32, 11));
    assert_eq!(m.features[0], "mpg");
    assert_eq!(m.names.as_ref().unwrap()[0], "Mazda RX4");
    assert!(notes(&m).contains("row index"), "{}", notes(&m));
}

#[test]
fn a_spreadsheet_export_with_semicolons_decimal_commas_crlf_and_a_bom() {
    let m = user("penguins_semicolon.csv").unwrap();
    assert_eq!(m.dialect.delimiter, Delimiter::Semicolon);
    assert!(m.dialect.decimal_comma);
    assert_eq!((m.n_points(), m.dim()), (30, 4));
    assert_eq!(
        m.features[0], "bill_length_mm",
        "the byte order mark is not in a name"
    );
    assert_eq!(m.row(0), [39.1, 18.7, 181.0, 3750.0]);
    assert_eq!(m.label_name.as_deref(), Some("species"));
    assert_eq!(m.labels.as_ref().unwrap()[29], "Gentoo");
}

#[test]
fn quoted_cells_hold_the_separator() {
    let m = user("cities_quoted.csv").unwrap();
    assert_eq!((m.n_points(), m.dim()), (10, 2));
    assert_eq!(m.names.as_ref().unwrap()[1], "Portland, ME");
    assert_eq!(m.row(1), [43.66, -70.26]);
}

#[test]
fn a_distance_matrix_reads_square_with_its_names() {
    let m = user("eurodist_write_csv.csv").unwrap();
    assert_eq!((m.n_points(), m.dim()), (21, 21));
    assert_eq!(m.names.as_ref().unwrap(), &m.features);
    assert_eq!(m.values[1], 3313.0, "Athens to Barcelona");
}

#[test]
fn ragged_rows_are_refused_by_line_or_read_as_r_row_names() {
    let e = user("ragged.csv").unwrap_err().to_string();
    assert!(
        e.contains("line 2") && e.contains("2 cells, but the header has 3"),
        "{e}"
    );
    // Numbers, unquoted, where R's row names would be: ambiguous, refused naming the line.
    let e = user("ragged_numbers.csv").unwrap_err().to_string();
    assert!(
        e.contains("line 2") && e.contains("3 cells, but the header has 2"),
        "{e}"
    );
    // One row longer than the others, after R's convention was set by the first: refused.
    let e = PointMatrix::parse(
        "a,b\n\"x\",2,3\n\"y\",5\n",
        &MatrixSpec {
            header: true,
            infer: true,
            ..MatrixSpec::default()
        },
        "t.csv",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("line 3") && e.contains("plus the row names"),
        "{e}"
    );
}

#[test]
fn an_r_export_with_na_is_refused_naming_line_and_column() {
    let e = user("penguins_na_write_csv.csv").unwrap_err().to_string();
    assert!(
        e.contains("line 5") && e.contains("\"bill_length_mm\"") && e.contains("NA"),
        "{e}"
    );
    assert!(!e.contains('\n'));
}

#[test]
fn crlf_line_numbers_are_the_editors() {
    let spec = MatrixSpec {
        header: true,
        infer: true,
        ..MatrixSpec::default()
    };
    for nl in ["\n", "\r\n", "\r"] {
        let text = ["x,y", "1,2", "", "3,4", "5,oops"].join(nl);
        let e = PointMatrix::parse(&text, &spec, "t.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 5") && e.contains("oops"), "{nl:?}: {e}");
    }
}
